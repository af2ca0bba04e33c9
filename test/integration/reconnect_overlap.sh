#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reconnect_overlap.sh - the reconnect stress of issue 13: femud with two
# pollers kept busy (random reads on a second device spread over both), and
# on the first device femu-bench --hostile --case reconnect_overlap: 150
# rounds in which a fresh frontend connects and starts its queue while the
# previous one still has a read in flight, then the old one hangs up; each
# fresh connection must serve a verified write and read.  Repeated
# OVERLAP_RUNS times (default 2).  femud must never judge a queue against
# another connection's indexes ("avail index moved") nor stall a control
# message.  Args: femu-bench path.  Env: FEMUD, OVERLAP_RUNS.
. "$(dirname "$0")/femu_bench_lib.sh"

S1=$T/a.sock S2=$T/load.sock
start_femud_opts r --lcores 0@0,1@0,2@1 --dev "path=$S1,devsz_mb=16,queues=2" \
	--dev "path=$S2,devsz_mb=16,queues=2" || { ko "femud start"; finish; }
"$BENCH" -q -s "$S2" --rw randread --bs 4k --qd 16 --queues 2 --time 240 >/dev/null 2>&1 &
LOAD=$!
pids+=("$LOAD")
runs=${OVERLAP_RUNS:-2} bad=0
for r in $(seq 1 "$runs"); do
	if ! timeout 200 "$BENCH" -s "$S1" --hostile --case reconnect_overlap --timeout 10000 \
		>"$T/run$r.out" 2>&1; then
		bad=$((bad + 1))
		grep -E "FAIL|femu-bench:" "$T/run$r.out" | head -3
	fi
done
kill "$LOAD" 2>/dev/null
[ "$bad" -eq 0 ] && ok "$runs x 150 overlapping reconnects served" || ko "$bad of $runs runs failed"
n=$(grep -c "frontends connected at once" "$T/r.log")
[ "$n" -gt 0 ] && ok "overlap happened ($n times femud saw two frontends at once)" ||
	ko "no overlap seen: the test did not test the race"
if grep -qE "avail index moved|queue stopped" "$T/r.log"; then
	ko "a queue was stopped: $(grep -E 'avail index moved|queue stopped' "$T/r.log" | head -2)"
else ok "no queue judged against another connection's indexes"; fi
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
