#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# persist_precondition.sh - tools/precondition on a small BlackBox SSD: it
# fills the device, prints the WA curve window by window until the window
# WA settles (GC running), saves the image; a femud started from the image
# carries the aged drive on (the counters at its start are the ones the
# preconditioning ended with) and serves the data written then.
# $1: femu-bench.  Env: FEMUD, SRCDIR.
. "$(dirname "$0")/femu_bench_lib.sh"

TOP=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
IMG=$T/aged.img
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
BB+=",pg_rd_lat=2000,pg_wr_lat=5000,blk_er_lat=20000,queues=1"
timeout 280 "$TOP/tools/precondition" --femud "$FEMUD" --bench "$BENCH" --dev "$BB,image=$IMG" \
	--window 0.5 --max-windows 12 >"$T/pre.out" 2>&1
rc=$?
cat "$T/pre.out"
[ $rc -eq 0 ] && [ -s "$IMG" ] && ok "precondition saved the image" || ko "precondition exit $rc"
windows=$(awk '$1 ~ /^[0-9]+$/ && NF == 6' "$T/pre.out" | wc -l)
[ "$windows" -ge 3 ] && ok "WA curve printed ($windows windows)" || ko "WA curve: $windows windows"
last_gc=$(awk '$1 ~ /^[0-9]+$/ && NF == 6 { g = $6 } END { print g + 0 }' "$T/pre.out")
last_host=$(awk '$1 ~ /^[0-9]+$/ && NF == 6 { h = $2 } END { print h + 0 }' "$T/pre.out")
[ "$last_gc" -gt 0 ] && ok "GC ran during the preconditioning ($last_gc runs)" || ko "no GC"
SOCK=$T/dev.sock
start_femud_opts run --lcores 0 --dev "path=$SOCK,$BB,image=$IMG" || { ko "start from the image"; finish; }
kill -USR1 "$FEMUD_PID"
for _ in $(seq 1 100); do grep -q '^gc_runs' "$T/run.log" && break; sleep 0.1; done
gc=$(awk '$1 == "gc_runs" { print $2; exit }' "$T/run.log")
host=$(awk '$1 == "host_write_pages" { print $2; exit }' "$T/run.log")
[ "$gc" = "$last_gc" ] && [ "$host" = "$last_host" ] &&
	ok "the aged drive carries on: gc_runs $gc, host_write_pages $host" ||
	ko "counters after the load: gc_runs $gc (want $last_gc), host_write_pages $host (want $last_host)"
size=$(grep -o 'serving [^ ]* (bbssd, [0-9]* bytes' "$T/run.log" | grep -o '[0-9]* bytes' | cut -d' ' -f1)
expect_ok readback -q -s "$SOCK" --rw read --bs 64k --qd 8 --size "$size" --verify --verify-gen 1 \
	--timeout 30000
stop_femud
finish
