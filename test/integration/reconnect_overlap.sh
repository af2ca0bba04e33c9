#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reconnect_overlap.sh - the reconnect stress: femud with two
# pollers kept busy (random reads on a second device spread over both), and
# on the first device femu-bench --hostile --case reconnect_overlap: 150
# rounds in which a fresh frontend connects and starts its queue while the
# previous one still has a read in flight, then the old one hangs up; each
# fresh connection must serve a verified write and read.  Repeated
# OVERLAP_RUNS times (default 2).  femud must never judge a queue against
# another connection's indexes ("avail index moved") nor stall a control
# message.  Then SAME_RING_RUNS (default 10) times --case reconnect_same_rings:
# the frontend reconnects on the same memory and rings while its old
# connection is still there; the new queue must take the ring over (the old
# one may not serve it any more).  Args: femu-bench path.  Env: FEMUD,
# OVERLAP_RUNS, SAME_RING_RUNS.
. "$(dirname "$0")/femu_bench_lib.sh"

S1=$T/a.sock S2=$T/load.sock
start_femud_opts r --lcores 0@0,1@0,2@1 --dev "path=$S1,devsz_mb=16,queues=2" \
	--dev "path=$S2,devsz_mb=16,queues=2" || { ko "femud start"; finish; }
"$BENCH" -q -s "$S2" --rw randread --bs 4k --qd 16 --queues 2 --time 240 >/dev/null 2>&1 &
LOAD=$!
pids+=("$LOAD")
# run_case CASE N LIMIT_S: N runs of one --hostile case on S1; prints how many failed
run_case() {
	local fails=0
	for r in $(seq 1 "$2"); do
		if ! timeout "$3" "$BENCH" -s "$S1" --hostile --case "$1" --timeout 10000 \
			>"$T/$1.$r.out" 2>&1; then
			fails=$((fails + 1))
			grep -E "FAIL|femu-bench:" "$T/$1.$r.out" | head -3 >&2
		fi
	done
	echo "$fails"
}
runs=${OVERLAP_RUNS:-2}
bad=$(run_case reconnect_overlap "$runs" 200)
# the same frontend reconnecting on the same memory and rings (QEMU's way)
# while femud still has its old connection: the new queue takes the ring over
same=${SAME_RING_RUNS:-10}
sbad=$(run_case reconnect_same_rings "$same" 60)
kill "$LOAD" 2>/dev/null
[ "$bad" -eq 0 ] && ok "$runs x 150 overlapping reconnects served" || ko "$bad of $runs runs failed"
[ "$sbad" -eq 0 ] && ok "$same reconnects on the same rings: the old connection stayed off them" ||
	ko "$sbad of $same same-ring reconnects failed"
n=$(grep -c "whose frontend reconnected on the same memory" "$T/r.log")
[ "$n" -eq "$same" ] && ok "each same-ring reconnect took the ring from the old connection" ||
	ko "$n ring take-overs logged for $same same-ring reconnects"
n=$(grep -c "frontends connected at once" "$T/r.log")
[ "$n" -gt 0 ] && ok "overlap happened ($n times femud saw two frontends at once)" ||
	ko "no overlap seen: the test did not test the race"
if grep -qE "avail index moved|queue stopped" "$T/r.log"; then
	ko "a queue was stopped: $(grep -E 'avail index moved|queue stopped' "$T/r.log" | head -2)"
else ok "no queue judged against another connection's indexes"; fi
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
