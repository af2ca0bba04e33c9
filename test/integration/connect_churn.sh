#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# connect_churn.sh - fresh connections with two queues each, one request per
# queue, both CPUs loaded by busy loops: femu-bench --connect-churn runs
# CHURN_N connections one after the other (each closes before the next
# connects), then CHURN_N with --churn-overlap (every other connection stays
# open, queues stopped, until the next one served its requests).  Every
# request must complete with the data written by the connection before, and
# femud must stop no queue.  By hand: CHURN_N=10000.  Args: femu-bench path.
# Env: FEMUD, CHURN_N (default 300).
. "$(dirname "$0")/femu_bench_lib.sh"

N=${CHURN_N:-300}
S=$T/churn.sock
start_femud_opts f --lcores 0@0,1@0,2@1 --dev "path=$S,devsz_mb=16,queues=2" ||
	{ ko "femud start"; finish; }
hogs=()
for _ in 1 2; do
	(while :; do :; done) &
	hogs+=($!)
	pids+=($!)
done
# run NAME ARGS...: one churn run; PASS when every request was served
run() {
	local name=$1; shift
	timeout 600 "$BENCH" -q -s "$S" --connect-churn "$N" --queues 2 --qsize 128 \
		--timeout 10000 "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	cat "$T/$name.out"
	if [ "$rc" -eq 0 ] && grep -q " 0 not completed, 0 bad status, 0 data mismatches" "$T/$name.out"; then
		ok "$name: $N connections, every request served and read back"
	else
		ko "$name (exit $rc)"
		head -20 "$T/$name.err"
	fi
}
run churn_event_idx
run churn_overlap --churn-overlap --no-event-idx
kill "${hogs[@]}" 2>/dev/null
n=$(grep -c "frontends connected at once" "$T/f.log")
[ "$n" -gt 0 ] && ok "two frontends were connected at once $n times" ||
	ko "no overlap seen: the overlap run did not test it"
if grep -qE "queue stopped|not started" "$T/f.log"; then
	ko "femud stopped or refused a queue: $(grep -E 'queue stopped|not started' "$T/f.log" | head -3)"
else ok "no queue stopped or refused"; fi
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
