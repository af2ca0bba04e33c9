#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# multi_dev.sh - one femud, two pollers, two devices at once: a NoSSD and a
# BlackBox SSD (whose queues must all go to one poller), each driven on 4
# queues with verify while the other is busy, then --hostile on the NoSSD
# while the BlackBox device keeps verifying.  $1: femu-bench.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

S1=$T/nossd.sock S2=$T/bbssd.sock
# femu-bench's bound on a request: generous.  The pollers are pinned (poller 0
# shares CPU 0 with the main lcore), and on this shared 2-CPU machine a pinned
# busy thread waits seconds for its CPU at times: under load ~12, femud's
# poller 0 waited up to 3.0 s on the run queue (schedstat) and a plain pinned
# spinner up to 2.2 s; the default 5 s timed both clients out once.
# A hang still fails, after 30 s.
TO="--timeout 30000"
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
BB="$BB,pg_rd_lat=1000,pg_wr_lat=2000,blk_er_lat=5000,queues=4"
"$FEMUD" --no-huge --rpc none --lcores 0@0,1@0,2@1 --dev "path=$S1,devsz_mb=64,queues=4" \
	--dev "path=$S2,$BB" >"$T/m.log" 2>&1 &
FEMUD_PID=$!
pids+=("$FEMUD_PID")
for _ in $(seq 1 200); do grep -q '^femud: ready' "$T/m.log" && break; sleep 0.1; done
grep -q '^femud: ready' "$T/m.log" || { ko "femud start: $(cat "$T/m.log")"; finish; }

expect_ok fill_nossd -q -s "$S1" --rw write --bs 4k,64k --qd 8 --queues 4 --size 64M --verify $TO
expect_ok fill_bbssd -q -s "$S2" --rw write --bs 64k --qd 8 --queues 4 --verify $TO
# Both devices at once: random reads on one, GC-heavy random writes on the other.
timeout 120 "$BENCH" -q -s "$S1" --rw randread --bs 4k --qd 8 --queues 4 --time 3 --verify $TO \
	>"$T/r1.out" 2>&1 &
r1=$!
expect_ok overwrite_bbssd -q -s "$S2" --rw randwrite --bs 4k,16k --qd 8 --queues 4 --ios 20000 --verify $TO
wait $r1 && ok "NoSSD verified reads while the BlackBox device ran GC" || ko "NoSSD reads: $(cat "$T/r1.out")"
# Hostile input on one device leaves the other intact.
timeout 200 "$BENCH" -s "$S1" --hostile >"$T/h.out" 2>&1
grep -q '^64 passed, 0 failed\|^[0-9]* passed, 0 failed' "$T/h.out" && ok "hostile cases on the NoSSD: $(tail -1 "$T/h.out")" ||
	ko "hostile: $(tail -5 "$T/h.out")"
expect_ok readback_bbssd -q -s "$S2" --rw read --bs 64k --qd 8 --queues 4 --verify $TO
# (--hostile writes the last 4 KiB block for its liveness checks: read back the rest)
expect_ok readback_nossd -q -s "$S1" --rw read --bs 128k --qd 4 --queues 2 --size 63M --verify $TO
stop_femud
pollers=$(grep -c '^poller ' "$T/m.log")
[ "$pollers" -eq 2 ] && ok "two pollers reported" || ko "pollers reported: $pollers"
gc=$(awk '$1 == "gc_runs" { print $2 }' "$T/m.log")
[ "${gc:-0}" -gt 0 ] && ok "BlackBox GC ran ($gc runs)" || ko "no GC on the BlackBox device"
# The pollers' counters, pass_gap_ns_max among them: how long a poller went
# without a pass, and any control message a poller was slow to take (a
# starved poller vs. femud stuck, when a step failed).
grep -E '^poller |has not taken a control message' "$T/m.log"
finish
