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
#           control plane of its own; once both ended and whatever they
#           left running is stopped, the file alone says so, and lane 1
#           waits for it before its probes: nothing runs beside the timed
#           reactions.
#
# Lane 1's figures beside lane 2: its CPU is the process's own CPU time
# (getrusage), its heap its own, its requests counted in its own
# transport; its cold start, a wall time, is over before lane 2 starts.
# Lane 2's throughput runs beside lane 1's idle manager (about 2% of a
# core; docs/performance.md). Each benchmark runs in a process group of its
# own, stopped when it ends and on Ctrl-C. The logs are
# out/scale-fleet.log and out/scale-lane2.log, both in out/scale.log at the
# end, which ends with one line per target (a target a failed benchmark
# did not print says "not measured").
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

# start DIR BINARY BENCH TIMEOUT: one benchmark, once, in the background,
# from its package's directory (the tests find the repository from there),
# in a process group of its own (its pid is the group's id).
start() {
	(cd "$root/$1" && exec setsid "$bin/$2" -test.run='^$' -test.bench="^$3\$" -test.benchtime=1x -test.timeout="$4") &
}

# stop PID: the benchmark's process group, whatever it left running (a
# control plane whose test timed out, say).
stop() { kill -- "-$1" 2>/dev/null || true; }

lane1= current= follow=
trap '[ -n "$lane1" ] && stop "$lane1"; [ -n "$current" ] && stop "$current"; [ -n "$follow" ] && kill "$follow" 2>/dev/null; exit 130' INT TERM

started=$(date +%s)
CAPTF_SCALE_QUIET_FILE="$sync/quiet" CAPTF_SCALE_ALONE_FILE="$sync/alone" \
	CAPTF_SCALE_FLEET_PROBES="${CAPTF_SCALE_FLEET_PROBES:-40}" \
	start test/scale scale.test BenchmarkIdleFleet 200m >"$out/scale-fleet.log" 2>&1
lane1=$!
: >"$out/scale-lane2.log"
tail -n +1 -F "$out/scale-fleet.log" "$out/scale-lane2.log" 2>/dev/null &
follow=$!

# Lane 2, in this shell.
rc=0
while [ ! -e "$sync/quiet" ] && kill -0 "$lane1" 2>/dev/null; do sleep 2; done
if [ -e "$sync/quiet" ]; then
	echo "scale: lane 1's fleet idles; lane 2 starts" >>"$out/scale-lane2.log"
	for b in "test/scale scale.test BenchmarkIdleFleetLargeStates 60m" "test/e2e e2e.test BenchmarkProvisioningThroughput 60m"; do
		# shellcheck disable=SC2086
		start $b >>"$out/scale-lane2.log" 2>&1
		current=$!
		wait "$current" || rc=$?
		stop "$current"
		current=
	done
else
	echo "scale: lane 1 ended before its fleet idled; lane 2 does not run" >>"$out/scale-lane2.log"
	rc=1
fi
touch "$sync/alone"
wait "$lane1" || rc=$?
stop "$lane1"
kill "$follow" 2>/dev/null || true

cat "$out/scale-fleet.log" "$out/scale-lane2.log" >"$out/scale.log"
took=$(($(date +%s) - started))
echo "scale: $((took / 60)) min $((took % 60)) s" | tee -a "$out/scale.log"
for n in 1 2 3 4; do
	grep -q "^target $n: " "$out/scale.log" || echo "target $n: not measured (a benchmark failed: see out/scale.log) missed" >>"$out/scale.log"
done
grep -h '^target ' "$out/scale.log" | sort
exit "$rc"
