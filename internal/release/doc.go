// Package release renders a CAPTF release as a clusterctl provider
// repository: infrastructure-components.yaml (config/default built with
// kustomize, the manager image set to the release's), metadata.yaml, the
// cluster templates of templates/ and checksums, under
// <out>/infrastructure-terraform/<version>/, the layout clusterctl reads
// from a file:// provider URL. `make release VERSION=vX.Y.Z` runs it.
package release
