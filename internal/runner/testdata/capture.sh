#!/usr/bin/env bash
# Captures the real output the failure-summary tests read: for each runtime,
# init against a mirror that lacks a provider, an apply whose resources fail,
# and validate -json of an invalid module; stderr with -no-color and with
# colour (ANSI escapes). Run from anywhere; needs the tool cache (make tools).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${CAPTF_TOOLS:-$("$here/../../../hack/tools/build.sh" --print-dir)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A mirror with random only: init of a module needing null fails.
mkdir -p "$work/partial/registry.opentofu.org/hashicorp" "$work/partial/registry.terraform.io/hashicorp"
for host in registry.opentofu.org registry.terraform.io; do
  cp -r "$T/providers/$host/hashicorp/random" "$work/partial/$host/hashicorp/"
done
mirror() { # mirror DIR -> cli config using DIR
  printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n    include = ["*/*/*"]\n  }\n  direct {\n    exclude = ["*/*/*"]\n  }\n}\n' "$1" >"$work/cli-$(basename "$1").tfrc"
  echo "$work/cli-$(basename "$1").tfrc"
}
partial=$(mirror "$work/partial")
full=$(mirror "$T/providers")

for rt in tofu terraform; do
  v=$([[ $rt == tofu ]] && echo tofu-1.12 || echo terraform-1.8)
  bin="$T/bin/$rt"
  for color in nocolor color; do
    flag=$([[ $color == nocolor ]] && echo -no-color || true)
    d="$work/$rt-init-$color" && cp -r "$here/capture/init" "$d"
    (cd "$d" && TF_CLI_CONFIG_FILE=$partial CHECKPOINT_DISABLE=1 "$bin" init -input=false $flag 2>"$here/$v-init-mirror-missing-$color.txt" >/dev/null) || true
    d="$work/$rt-apply-$color" && cp -r "$here/capture/apply" "$d"
    (cd "$d" && TF_CLI_CONFIG_FILE=$full CHECKPOINT_DISABLE=1 "$bin" init -input=false -no-color >/dev/null &&
      TF_CLI_CONFIG_FILE=$full CHECKPOINT_DISABLE=1 "$bin" apply -auto-approve -input=false $flag 2>"$here/$v-apply-$color.txt" >/dev/null) || true
  done
  d="$work/$rt-validate" && cp -r "$here/capture/validate" "$d"
  (cd "$d" && TF_CLI_CONFIG_FILE=$full CHECKPOINT_DISABLE=1 "$bin" init -input=false -no-color >/dev/null &&
    TF_CLI_CONFIG_FILE=$full CHECKPOINT_DISABLE=1 "$bin" validate -json -no-color >"$here/$v-validate.json") || true
done
ls -l "$here"/*.txt "$here"/*.json
