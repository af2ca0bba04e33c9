#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# two_frontends.sh - one queue index, one frontend: while femu-bench A runs a
# verified write/read mix on both queues of a device, a second femu-bench B
# connects to the same socket and starts the same queues.  femud accepts the
# connection but refuses B's queue starts (logged); B's requests wait until A
# has given the queues back (GET_VRING_BASE at its end), A's data verifies, and
# a third frontend C reads A's data back.  Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

S=$T/two.sock
start_femud_opts f --lcores 0@0,1@0,2@1 --dev "path=$S,devsz_mb=16,queues=2" ||
	{ ko "femud start"; finish; }
timeout 120 "$BENCH" -q -s "$S" --rw write --bs 4k --qd 8 --queues 2 --size 8M --time 6 \
	--verify --verify-gen 3 --timeout 20000 >"$T/a.out" 2>"$T/a.err" &
A=$!
pids+=("$A")
for _ in $(seq 1 50); do grep -q "queue 1: started" "$T/f.log" && break; sleep 0.1; done
bench b -s "$S" --rw write --bs 4k --qd 4 --queues 2 --offset 6M --size 2M --time 1 \
	--timeout 30000
# B's requests complete only once A gave the queues back, seconds later
p50=$(awk '/latency us:/ { for (i = 1; i < NF; i++) if ($i == "p50") print int($(i + 1)) }' "$T/b.out")
[ "$RC" -eq 0 ] && [ "${p50:-0}" -ge 2000000 ] &&
	ok "the second frontend was served only after the first stopped (p50 ${p50} us)" ||
	{ ko "the second frontend was served while the first drove the queues"; cat "$T/b.out" "$T/b.err"; }
n=$(grep -c "drives this queue" "$T/f.log")
[ "$n" -ge 1 ] && ok "femud logged the refused start ($n): $(grep -m1 'drives this queue' "$T/f.log")" ||
	ko "no refused start logged"
wait "$A"
rc=$?
[ "$rc" -eq 0 ] && ok "the first frontend's data verified" ||
	{ ko "first frontend (exit $rc)"; cat "$T/a.out" "$T/a.err"; }
expect_ok c_after -q -s "$S" --rw read --bs 4k --qd 8 --queues 2 --size 6M --verify --verify-gen 3 \
	--timeout 10000
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
