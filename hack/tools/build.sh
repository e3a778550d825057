#!/usr/bin/env bash
# hack/tools/build.sh — build the pinned external binaries CAPTF needs, from
# the Go module proxy only (no release download site is reachable here).
#
#   hack/tools/build.sh [--print-dir] [COMPONENT...]
#
# Components (default: all but lint):
#   control-plane  etcd, kube-apiserver, kube-controller-manager, kubectl
#   capi           Cluster API's core, kubeadm bootstrap and kubeadm control
#                  plane managers, their CRDs and webhook manifests; clusterctl
#   runtimes       tofu, terraform, the null/random/local/time providers as an
#                  unpacked filesystem mirror for both registry host names
#   codegen        controller-gen
#   monitoring     promtool (the alert rules' checks and unit tests)
#   shell          sh, the module base images' shell (hack/tools/shell)
#   lint           golangci-lint (only `make verify` asks for it)
#
# Everything lands in one directory outside the repository, keyed by a hash
# of hack/tools/versions.env's assignments above its "per-tool keys" line
# (the tools pinned below it are stamped with their own version instead):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/captf/tools/<version-set>/
#     bin/        every binary
#     providers/  registry.opentofu.org/... and registry.terraform.io/...
#     cli.tfrc    a CLI config that installs providers only from providers/
#     capi/crd/   Cluster API CRDs;  capi/webhook/manifests.yaml
#     capi-kubeadm-bootstrap/, capi-kubeadm-control-plane/  the same for kubeadm
# A component whose stamp is present is never rebuilt, so a warm run takes
# well under a second. --print-dir prints the directory and nothing else.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions="$here/versions.env"
# shellcheck source=versions.env
source "$versions"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/captf
set_id=$(sed '/^# ---- per-tool keys/q' "$versions" | grep -E '^[A-Z_]+=' | sort | sha256sum | cut -c1-12)
DIR="$cache/tools/$set_id"
WORK="$cache/build"

if [[ "${1:-}" == "--print-dir" ]]; then
  echo "$DIR"
  exit 0
fi

components=("$@")
((${#components[@]})) || components=(control-plane capi runtimes codegen monitoring shell)

command -v go >/dev/null || { echo "hack/tools: the go command is required" >&2; exit 1; }
mkdir -p "$DIR/bin" "$DIR/.stamps" "$WORK"
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export GOTOOLCHAIN=local

say() { printf '[hack/tools %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
done_stamp() { [[ -f "$DIR/.stamps/$1" ]]; }
stamp() { date -u +%FT%TZ >"$DIR/.stamps/$1"; }

# step NAME CMD... runs CMD once per version set: skipped when NAME's stamp
# exists, stamped only when CMD succeeds.
step() {
  local name=$1
  shift
  if done_stamp "$name"; then return 0; fi
  local start=$SECONDS
  say "building $name (cold builds take minutes; this runs once per version set)"
  "$@"
  stamp "$name"
  say "built $name in $((SECONDS - start))s"
}

# moddir MODULE VERSION prints the module's directory in the module cache.
moddir() { (cd "$WORK" && go mod download -json "$1@$2") | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'; }
gomodfile() { (cd "$WORK" && go mod download -json "$1@$2") | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p'; }

# fresh_module DIR NAME GOVERSION: an empty throwaway main module.
fresh_module() {
  rm -rf "$1"
  mkdir -p "$1"
  printf 'module %s\n\ngo %s\n' "$2" "$3" >"$1/go.mod"
}

# ------------------------------------------------------------ control plane
# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
# with ./staging paths that are not in its module zip. A dependency's replace
# directives are ignored, so our wrapper re-points each at its published tag.
kube_wrapper() {
  local w="$WORK/kubernetes-$K8S_VERSION" kmod staging="v0.${K8S_VERSION#v1.}"
  [[ -f "$w/.ready" ]] && { echo "$w"; return; }
  kmod=$(gomodfile k8s.io/kubernetes "$K8S_VERSION")
  [[ -f "$kmod" ]] || { echo "hack/tools: cannot download k8s.io/kubernetes@$K8S_VERSION" >&2; return 1; }
  fresh_module "$w" captf-tools/kubernetes "$(awk '$1=="go"{print $2; exit}' "$kmod")"
  {
    printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    awk '
      /^require[[:space:]]*\(/ {inreq=1; next}
      inreq && /^\)/ {inreq=0}
      inreq && $2=="v0.0.0" && $1 ~ /^k8s\.io\// {zero[$1]=1}
      /=>[[:space:]]*\.\/staging\// {local[$1]=1}
      END {for (m in zero) if (m in local) print m}
    ' "$kmod" | sort | while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging"; done
    printf ')\n'
  } >>"$w/go.mod"
  (cd "$w" && go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION") >&2
  touch "$w/.ready"
  echo "$w"
}

build_kube() { # build_kube BINARY
  local w minor=${K8S_VERSION#v1.} ldflags="-s -w"
  minor=${minor%%.*}
  w=$(kube_wrapper)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$w" && go build -trimpath -ldflags="$ldflags" -o "$DIR/bin/$1.tmp" "k8s.io/kubernetes/cmd/$1")
  mv -f "$DIR/bin/$1.tmp" "$DIR/bin/$1"
}

build_etcd() {
  local w="$WORK/etcd-$ETCD_VERSION"
  fresh_module "$w" captf-tools/etcd 1.26.0
  (cd "$w" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
    go build -trimpath -ldflags='-s -w' -o "$DIR/bin/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv -f "$DIR/bin/etcd.tmp" "$DIR/bin/etcd"
}

control_plane() {
  step etcd build_etcd
  step kube-apiserver build_kube kube-apiserver
  step kube-controller-manager build_kube kube-controller-manager
  step kubectl build_kube kubectl
}

# --------------------------------------------------------------------- CAPI
# The core manager requires sigs.k8s.io/cluster-api/api at a pseudo-version
# replaced by ./api; the wrapper points it at the published tag instead and
# lets MVS keep CAPI's own k8s.io pins.
capi_wrapper() {
  local cmod w="$WORK/cluster-api-$CAPI_VERSION"
  [[ -f "$w/.ready" ]] && { echo "$w"; return; }
  cmod=$(gomodfile sigs.k8s.io/cluster-api "$CAPI_VERSION")
  fresh_module "$w" captf-tools/cluster-api "$(awk '$1=="go"{print $2; exit}' "$cmod")"
  printf '\nrequire sigs.k8s.io/cluster-api %s\n' "$CAPI_VERSION" >>"$w/go.mod"
  awk '$1=="replace" && $2 ~ /^sigs\.k8s\.io\/cluster-api\// && $4 ~ /^\.\.?\// {print $2}
       $1 ~ /^sigs\.k8s\.io\/cluster-api\// && $2=="=>" && $3 ~ /^\.\.?\// {print $1}' "$cmod" |
    sort -u | while read -r m; do printf 'replace %s => %s %s\n' "$m" "$m" "$CAPI_VERSION"; done >>"$w/go.mod"
  (cd "$w" && go get "sigs.k8s.io/cluster-api/core@$CAPI_VERSION") >&2
  touch "$w/.ready"
  echo "$w"
}

# build_capi_binary PACKAGE BINARY builds a command of the Cluster API
# module with its version stamped in.
build_capi_binary() {
  local w minor=${CAPI_VERSION#v1.} p=sigs.k8s.io/cluster-api/version
  minor=${minor%%.*}
  w=$(capi_wrapper)
  local ldflags="-s -w -X $p.gitVersion=$CAPI_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  (cd "$w" && go build -trimpath -ldflags="$ldflags" -o "$DIR/bin/$2.tmp" "sigs.k8s.io/cluster-api/$1")
  mv -f "$DIR/bin/$2.tmp" "$DIR/bin/$2"
}

# build_capi_manager PACKAGE BINARY CONFIG-DIR builds one of Cluster API's
# managers and copies its CRDs and webhook manifests under CONFIG-DIR/.
build_capi_manager() {
  local src
  src=$(moddir sigs.k8s.io/cluster-api "$CAPI_VERSION")
  build_capi_binary "$1" "$2"
  rm -rf "$DIR/$3"
  mkdir -p "$DIR/$3/crd" "$DIR/$3/webhook"
  # The contract labels config/crd/kustomization.yaml gives every CRD,
  # which the topology controller reads to pick a template's version.
  local labels f
  labels=$(grep -E '^[[:space:]]+cluster\.x-k8s\.io/v1beta[0-9]+: v1beta[0-9]+$' "$src/$1/config/crd/kustomization.yaml" | sed -E 's/^[[:space:]]+/    /' || true)
  for f in "$src/$1"/config/crd/bases/*.yaml; do
    if [[ -n "$labels" ]]; then
      awk -v labels="$labels" '{print} /^metadata:$/ && !done {print "  labels:"; print labels; done=1}' "$f" >"$DIR/$3/crd/$(basename "$f")"
    else
      cp "$f" "$DIR/$3/crd/"
    fi
  done
  cp "$src/$1/config/webhook/manifests.yaml" "$DIR/$3/webhook/manifests.yaml"
  chmod -R u+w "$DIR/$3"
}

capi() {
  step capi build_capi_manager core capi-manager capi
  step capi-kubeadm-bootstrap build_capi_manager bootstrap/kubeadm capi-kubeadm-bootstrap capi-kubeadm-bootstrap
  step capi-kubeadm-control-plane build_capi_manager controlplane/kubeadm capi-kubeadm-control-plane capi-kubeadm-control-plane
  step clusterctl build_capi_binary cmd/clusterctl clusterctl
}

# ----------------------------------------------------------------- runtimes
build_tofu() {
  local src w="$WORK/opentofu-$TOFU_VERSION"
  src=$(moddir github.com/opentofu/opentofu "$TOFU_VERSION")
  fresh_module "$w" captf-tools/opentofu "$(sed -n 's/^go //p' "$src/go.mod" | head -1)"
  # `go install` refuses a module with replace directives (OpenTofu forks
  # hcl/v2), so the wrapper carries the same module-to-module replaces.
  grep -E '^replace [^ ]+( v[^ ]+)? => [^./][^ ]* v[^ ]+$' "$src/go.mod" |
    sed -E 's/^replace ([^ ]+)( v[^ ]+)? =>/replace \1 =>/' >>"$w/go.mod" || true
  (cd "$w" && go get "github.com/opentofu/opentofu/cmd/tofu@$TOFU_VERSION" &&
    go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$DIR/bin/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu)
  mv -f "$DIR/bin/tofu.tmp" "$DIR/bin/tofu"
}

build_terraform() {
  # 1.8.5 is the newest Terraform whose module zip holds its backends; 1.6+
  # splits state over -part-N Secrets, which the state tests need.
  GOBIN="$DIR/bin" go install -trimpath -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
    "github.com/hashicorp/terraform@$TERRAFORM_VERSION"
}

plain() { local v=${1#v}; echo "${v%+incompatible}"; }
platform() { echo "$(go env GOOS)_$(go env GOARCH)"; }

# mirror TYPE VERSION BINARY lays a provider out for both registry hosts.
# Terraform follows a symlink only at the <os>_<arch> level.
mirror() {
  local v rel
  v=$(plain "$2")
  rel="hashicorp/$1/$v/$(platform)"
  mkdir -p "$DIR/providers/registry.opentofu.org/$rel" "$DIR/providers/registry.terraform.io/hashicorp/$1/$v"
  install -m 0755 "$3" "$DIR/providers/registry.opentofu.org/$rel/terraform-provider-$1_v$v"
  ln -sfn "../../../../registry.opentofu.org/$rel" "$DIR/providers/registry.terraform.io/$rel"
}

# null and random are only served at pre-0.12 releases; compiled against the
# plugin packages of terraform v0.12.x they speak plugin protocol 5.
build_legacy_provider() {
  local t=$1 v=$2 w="$WORK/legacy-providers"
  if [[ ! -f "$w/.ready" ]]; then
    fresh_module "$w" captf-tools/legacy-providers 1.22
    (cd "$w" && go get "github.com/hashicorp/terraform@$LEGACY_SDK_VERSION" \
      "github.com/terraform-providers/terraform-provider-null@$NULL_VERSION" \
      "github.com/terraform-providers/terraform-provider-random@$RANDOM_VERSION")
    touch "$w/.ready"
  fi
  (cd "$w" && go build -trimpath -ldflags "-s -w" -o "$w/terraform-provider-$t" "github.com/terraform-providers/terraform-provider-$t")
  mirror "$t" "$v" "$w/terraform-provider-$t"
}

# local v1.4.0 declares the old module path but is served under the new one,
# so its source is built as a main module of its own.
build_local_provider() {
  local src w="$WORK/provider-local-$LOCAL_VERSION"
  src=$(moddir github.com/hashicorp/terraform-provider-local "$LOCAL_VERSION")
  rm -rf "$w"
  cp -r "$src" "$w"
  chmod -R u+w "$w"
  rm -rf "$w/vendor"
  (cd "$w" && go build -mod=mod -trimpath -ldflags "-s -w" -o terraform-provider-local .)
  mirror local "$LOCAL_VERSION" "$w/terraform-provider-local"
}

build_time_provider() {
  local gobin="$WORK/provider-time-bin"
  mkdir -p "$gobin"
  GOBIN="$gobin" go install -trimpath -ldflags "-s -w" "github.com/hashicorp/terraform-provider-time@$TIME_VERSION"
  mirror time "$TIME_VERSION" "$gobin/terraform-provider-time"
}

# write_cli_config names the mirror by its physical path, and rewrites the
# file only when that changes (then by rename): a cache reached through a
# link (a test's own XDG_CACHE_HOME linking to this one) keeps naming the
# real directory, and a runtime reading the file never sees it half written.
write_cli_config() {
  local real conf
  real=$(cd "$DIR" && pwd -P)
  conf=$(cat <<CONF
provider_installation {
  filesystem_mirror {
    path    = "$real/providers"
    include = ["*/*/*"]
  }
  direct {
    exclude = ["*/*/*"]
  }
}
CONF
)
  if [[ -f "$DIR/cli.tfrc" && "$(cat "$DIR/cli.tfrc")" == "$conf" ]]; then
    return
  fi
  printf '%s\n' "$conf" >"$DIR/cli.tfrc.tmp.$$"
  mv -f "$DIR/cli.tfrc.tmp.$$" "$DIR/cli.tfrc"
}

runtimes() {
  step tofu build_tofu
  step terraform build_terraform
  step provider-null build_legacy_provider null "$NULL_VERSION"
  step provider-random build_legacy_provider random "$RANDOM_VERSION"
  step provider-local build_local_provider
  step provider-time build_time_provider
  write_cli_config
}

codegen() {
  step controller-gen env GOBIN="$DIR/bin" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
}

# promtool is built inside Prometheus's own module, whose replace
# directives then apply (outside its go.work, which names directories its
# module zip does not hold).
build_promtool() {
  local src w="$WORK/prometheus-$PROMETHEUS_VERSION"
  rm -f "$DIR/.stamps/promtool@"* # one binary: another version's stamp goes
  src=$(moddir github.com/prometheus/prometheus "$PROMETHEUS_VERSION")
  rm -rf "$w"
  cp -r "$src" "$w"
  chmod -R u+w "$w"
  (cd "$w" && GOWORK=off go build -trimpath -ldflags "-s -w" -o "$DIR/bin/promtool.tmp" ./cmd/promtool)
  mv -f "$DIR/bin/promtool.tmp" "$DIR/bin/promtool"
  rm -rf "$w"
}

monitoring() {
  step "promtool@$PROMETHEUS_VERSION" build_promtool
}

# The base images' /bin/sh: a POSIX shell interpreter with core utilities,
# static, from hack/tools/shell; keyed by its files and the Go toolchain.
# Its go.mod is kept as shell.mod (and go.sum as shell.sum), so that the
# directory stays part of CAPTF's module zip (which leaves nested modules
# out) for an installed captf-dev; shell-module.sh lays the module out.
build_shell() {
  local w="$WORK/shell"
  rm -f "$DIR/.stamps/sh@"* # one binary: another source's stamp goes
  "$here/shell-module.sh" "$w"
  (cd "$w" && go build -tags captfshell -trimpath -ldflags "-s -w" -o "$DIR/bin/sh.tmp" .)
  mv -f "$DIR/bin/sh.tmp" "$DIR/bin/sh"
}

shell() {
  local key
  key=$( (go version && cd "$here/shell" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-12)
  step "sh@$key" build_shell
}

lint() {
  step golangci-lint env GOBIN="$DIR/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
}

for c in "${components[@]}"; do
  case "$c" in
    control-plane) control_plane ;;
    capi) capi ;;
    runtimes) runtimes ;;
    codegen) codegen ;;
    monitoring) monitoring ;;
    shell) shell ;;
    lint) lint ;;
    *) echo "hack/tools: unknown component $c (control-plane, capi, runtimes, codegen, monitoring, shell, lint)" >&2; exit 2 ;;
  esac
done
