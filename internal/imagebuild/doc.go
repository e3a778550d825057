// Package imagebuild builds OCI images without a container daemon: the
// files of an image laid out in one layer, written reproducibly (entries
// sorted, times and owners fixed, so the same files give the same digest)
// as an OCI image layout. It owns what the CAPTF manager image holds
// (Manager); images/manager/Containerfile is the same recipe for users
// with a builder, and a test keeps the two alike.
package imagebuild
