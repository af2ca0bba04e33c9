#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bbssd_gc_verify.sh - BlackBox SSD (femu_mode=1) end to end: a small device
# (2 ch x 2 LUNs x 16 blocks x 64 pages, op_pcent=25, NAND times scaled down
# so the test is quick) is filled, overwritten at random three times its
# capacity with verify data, then read back and checked in full on a fresh
# connection; femud's counters at exit must show GC runs, block erases and a
# write amplification above 1, and no allocation failure.
# $1: femu-bench.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

GEOM=",femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
TIMES=",pg_rd_lat=2000,pg_wr_lat=5000,blk_er_lat=20000,queues=2"
start_femud bb "$GEOM$TIMES" || { ko "femud start"; finish; }
size=$(grep -o 'serving [^ ]* (bbssd, [0-9]* bytes' "$T/bb.log" | grep -o '[0-9]* bytes' | cut -d' ' -f1)
nand=$((2 * 2 * 16 * 64 * 4096))
if [ -n "$size" ] && [ "$size" -eq $((nand * 100 / 125 / 4096 * 4096)) ]; then
	ok "capacity derived from the NAND with op_pcent=25: $size bytes"
else
	ko "capacity '$size' (NAND $nand bytes)"
fi
pages=$((size / 4096))
expect_ok fill -q -s "$SOCK" --rw write --bs 64k --qd 8 --size "$size" --verify --verify-gen 1
expect_ok overwrite -q -s "$SOCK" --rw randwrite --bs 4k,8k,16k --qd 16 --queues 2 --ios $((pages * 3 / 2)) \
	--size "$size" --verify --verify-gen 1
expect_ok readback -q -s "$SOCK" --rw read --bs 128k --qd 4 --size "$size" --verify --verify-gen 1

stop_femud
stat() { awk -v k="$1" '$1 == k { print $2 }' "$T/bb.log" | head -1; }
gc=$(stat gc_runs) er=$(stat block_erases) wa=$(stat write_amplification) af=$(stat alloc_failures)
echo "counters: gc_runs=$gc block_erases=$er write_amplification=$wa alloc_failures=$af"
[ "${gc:-0}" -gt 0 ] && ok "GC ran ($gc runs)" || ko "no GC run reported"
[ "${er:-0}" -gt 0 ] && ok "blocks erased ($er)" || ko "no erase reported"
awk -v w="${wa:-0}" 'BEGIN { exit !(w > 1.0) }' && ok "write amplification $wa > 1" || ko "write amplification '$wa'"
[ "${af:-1}" -eq 0 ] && ok "no allocation failure" || ko "alloc_failures '$af'"
finish
