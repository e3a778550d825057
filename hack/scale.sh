#!/usr/bin/env bash
# hack/scale.sh — make scale: the fleet benchmarks of docs/performance.md in
# two lanes, so that the whole stays under 40 minutes on the reference
# machine.
#
#   lane 1  test/scale BenchmarkIdleFleet: the 5,000-machine fleet is made
#           and adopted, cold-started (target 4), idles ten minutes and
#           waits for its first resync (target 3), then times new machines
#           on it (target 2). Its idle minutes and the wait for its resync
#           are twenty minutes in which its process does almost nothing.
#   lane 2  starts once lane 1's fleet idles (the file quiet): test/scale
#           BenchmarkIdleFleetLargeStates (target 3's heap ratio), then
#           test/e2e BenchmarkProvisioningThroughput (target 1), each with a
#           control plane of its own; it ends by creating the file alone,
#           which lane 1 waits for before its probes, so that nothing runs
#           beside the timed reactions.
#
# Lane 1's figures beside lane 2: its CPU is the process's own CPU time
# (getrusage), its heap its own, its requests counted in its own
# transport; only its cold start is a wall time, and it is over before
# lane 2 starts. The logs are out/scale-fleet.log and out/scale-lane2.log,
# both in out/scale.log at the end, which ends with the target lines.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/out"
bin="$out/scale-bin"
sync="$out/scale-sync"
mkdir -p "$out" "$bin"
rm -rf "$sync" && mkdir -p "$sync"
: "${CAPTF_TOOLS:?CAPTF_TOOLS must name the tool cache (make scale sets it)}"
export CAPTF_SCALE=1 CAPTF_SCALE_PROFILE_DIR="${CAPTF_SCALE_PROFILE_DIR:-$out/scale-profiles}"

echo "scale: building the benchmarks"
(cd "$root" && go test -c -o "$bin/scale.test" -ldflags=-w ./test/scale && go test -c -o "$bin/e2e.test" -ldflags=-w ./test/e2e)

# run DIR BINARY BENCH TIMEOUT: one benchmark, once, from its package's
# directory (the tests find the repository from there).
run() {
	(cd "$root/$1" && "$bin/$2" -test.run='^$' -test.bench="^$3\$" -test.benchtime=1x -test.timeout="$4")
}

started=$(date +%s)
CAPTF_SCALE_QUIET_FILE="$sync/quiet" CAPTF_SCALE_ALONE_FILE="$sync/alone" \
	CAPTF_SCALE_FLEET_PROBES="${CAPTF_SCALE_FLEET_PROBES:-40}" \
	run test/scale scale.test BenchmarkIdleFleet 120m >"$out/scale-fleet.log" 2>&1 &
lane1=$!
(
	trap 'touch "$sync/alone"' EXIT
	while [ ! -e "$sync/quiet" ]; do
		if ! kill -0 "$lane1" 2>/dev/null; then
			echo "scale: lane 1 ended before its fleet idled; lane 2 does not run"
			exit 1
		fi
		sleep 2
	done
	echo "scale: lane 1's fleet idles; lane 2 starts"
	rc=0
	run test/scale scale.test BenchmarkIdleFleetLargeStates 60m || rc=$?
	run test/e2e e2e.test BenchmarkProvisioningThroughput 60m || rc=$?
	exit "$rc"
) >"$out/scale-lane2.log" 2>&1 &
lane2=$!
tail -n +1 -F "$out/scale-fleet.log" "$out/scale-lane2.log" 2>/dev/null &
follow=$!
rc=0
wait "$lane1" || rc=$?
wait "$lane2" || rc=$?
kill "$follow" 2>/dev/null || true
cat "$out/scale-fleet.log" "$out/scale-lane2.log" >"$out/scale.log"
echo "scale: $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s" | tee -a "$out/scale.log"
grep -h '^target ' "$out/scale.log" | sort
exit "$rc"
