#!/usr/bin/env bash
# Regenerates the real-plan fixtures of the plan package: for each runtime
# (tofu, terraform) it applies testdata/module in a temporary directory with
# a local backend and the pinned provider mirror, then saves the
# `show -json` document of these plans as testdata/<runtime>/<case>.json:
#
#   create         plan of the module against an empty state
#   empty          no change after the apply
#   update         var.label changed: terraform_data.label updated in place
#   replace        var.trigger changed: null_resource.this replaced
#   replace-again  the same replace plan, planned a second time
#   delete         var.with_file=false: local_file.this[0] deleted
#   output         var.greeting changed: only an output changes
#
# The module's plans carry no secrets, so saving them is fine. After
# running it, refresh the golden files: go test ./internal/plan/ -update
#
# Needs the tool cache (CAPTF_TOOLS, or hack/tools/build.sh --print-dir):
# bin/tofu, bin/terraform, providers/ and cli.tfrc. No network is used.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
tools=${CAPTF_TOOLS:-$(cd "$repo" && hack/tools/build.sh --print-dir)}

export TF_CLI_CONFIG_FILE="$tools/cli.tfrc"
export CHECKPOINT_DISABLE=1
export TF_IN_AUTOMATION=1
export TF_INPUT=0

runtimes=("$@")
if [ ${#runtimes[@]} -eq 0 ]; then
  runtimes=(tofu terraform)
fi

for runtime in "${runtimes[@]}"; do
  bin="$tools/bin/$runtime"
  if [ ! -x "$bin" ]; then
    echo "generate.sh: $bin not found; build the tool cache first" >&2
    exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$here"/module/*.tf "$work"/
  out="$here/$runtime"
  mkdir -p "$out"

  tf() { (cd "$work" && "$bin" "$@" -no-color) >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; exit 1; }; }
  # plan_case <case> [plan args...]: plan, then save show -json.
  plan_case() {
    local name=$1
    shift
    # -detailed-exitcode: 0 no changes, 2 changes; anything else failed.
    local rc=0
    (cd "$work" && "$bin" plan -no-color -detailed-exitcode -out="$name.tfplan" "$@") >"$work/last.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
      cat "$work/last.log" >&2
      exit 1
    fi
    (cd "$work" && "$bin" show -json "$name.tfplan") >"$out/$name.json"
    echo "$runtime: $name (plan exit $rc)"
  }

  (cd "$work" && "$bin" init -no-color) >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; exit 1; }
  plan_case create
  tf apply -auto-approve create.tfplan
  plan_case empty
  plan_case update -var label=beta
  plan_case replace -var trigger=two
  plan_case replace-again -var trigger=two
  plan_case delete -var with_file=false
  plan_case output -var greeting=bonjour

  rm -rf "$work"
  trap - EXIT
done
