#!/usr/bin/env bash
# hack/tools/shell-module.sh DEST — lay out the module of the base images'
# shell (hack/tools/shell: main.go, shell.mod, shell.sum) in DEST as a Go
# module of its own; build or vet it there with -tags captfshell.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/shell" && pwd)
dest=${1:?usage: shell-module.sh DEST}
rm -rf "$dest"
mkdir -p "$dest"
cp "$src/main.go" "$dest/main.go"
cp "$src/shell.mod" "$dest/go.mod"
cp "$src/shell.sum" "$dest/go.sum"
