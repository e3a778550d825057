//go:build !captfsoak

package crashpoint

// hit does nothing outside the soak's build.
func hit(string) {}
