#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mem_fault.sh - a frontend shrinks the memfd behind its guest memory while
# femud serves it (femu-bench --hostile memfd_* cases: data buffers cut, then
# everything cut under running rings; and the memfd of its inflight region
# cut under a queue that tracks requests there).  femud must survive the SIGBUS, log it
# naming the device and region, stop that connection's queues, and keep
# serving a second device that verifies writes and reads all along, on the
# same poller.  $1: femu-bench.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

S1=$T/victim.sock S2=$T/other.sock
start_femud_opts m --lcores 0 --dev "path=$S1,devsz_mb=16" --dev "path=$S2,devsz_mb=32" ||
	{ ko "femud start"; finish; }
expect_ok fill_other -q -s "$S2" --rw write --bs 4k --qd 8 --size 32M --verify --verify-gen 3
timeout 120 "$BENCH" -q -s "$S2" --rw randread --bs 4k --qd 4 --size 32M --time 8 --verify \
	--verify-gen 3 >"$T/other.out" 2>&1 &
other=$!
bench hostile -s "$S1" --hostile --case memfd_ --timeout 5000
cat "$T/hostile.out"
if [ "$RC" -eq 0 ] && grep -q '^3 passed, 0 failed$' "$T/hostile.out"; then
	ok "memfd cases: $(tail -n 1 "$T/hostile.out")"
else ko "memfd cases (exit $RC): $(tail -n 3 "$T/hostile.out")"; fi
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive after the memfd was shrunk" || ko "femud died"
n=$(grep -c "$S1: guest memory region 0 faulted (SIGBUS) at offset" "$T/m.log")
[ "$n" -ge 2 ] && ok "fault logged with device and region ($n times)" ||
	{ ko "fault log lines: $n"; cat "$T/m.log"; }
grep -q "$S1: the inflight region faulted (SIGBUS) at offset" "$T/m.log" &&
	ok "inflight region fault logged with the device" || ko "no inflight region fault logged"
wait "$other" && ok "the other device verified reads throughout" ||
	ko "other device: $(cat "$T/other.out")"
expect_ok readback_other -q -s "$S2" --rw read --bs 64k --qd 4 --size 32M --verify --verify-gen 3
# the victim device itself serves a fresh, well-behaved frontend again
expect_ok victim_again -q -s "$S1" --rw write --bs 4k --qd 4 --size 4M --verify
finish
