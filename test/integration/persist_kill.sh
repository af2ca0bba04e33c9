#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# persist_kill.sh - crash consistency of a persistent medium (mem_path):
# femu-bench writes verify data at random (several block sizes, 2 queues,
# QD 32) with a verify map that records, per sector, the generation last
# acknowledged and last submitted; femud is SIGKILLed mid-run, restarted on
# the same mem_path, and a read pass must find in every sector the
# acknowledged generation, or the submitted one for a write that was in
# flight (old or new, sector by sector; a torn sector fails its checksum).
# Several rounds, each with its own generation; with BlackBox every restart
# checks (and repairs) the FTL state and GC keeps running on it.  Then the negative control:
# the same check after format=1 must fail (lost acknowledged writes).
# $1: femu-bench; $2: nossd | bbssd.  Env: FEMUD.
MODE=${2:-nossd}
. "$(dirname "$0")/femu_bench_lib.sh"

ROUNDS=${PERSIST_KILL_ROUNDS:-4}
if [ "$MODE" = bbssd ]; then
	# 2 ch x 2 LUNs x 16 blocks x 64 pages, op_pcent=25: GC runs within the first round.
	DEV=",femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
	DEV+=",pg_rd_lat=2000,pg_wr_lat=5000,blk_er_lat=20000,queues=2"
	MEDIUM=$(mktemp -u /dev/shm/femud-persist-kill.XXXXXX) # tmpfs
else
	DEV=",devsz_mb=64,queues=2"
	MEDIUM=$T/medium # the disk file system /tmp is on
fi
trap 'cleanup; rm -f "$MEDIUM"' EXIT
VMAP=$T/vmap
SOCK=$T/dev.sock
RW="--rw randwrite --bs 4k,64k,512,128k --qd 32 --queues 2 --verify-map $VMAP"

start() { start_femud_opts "$1" --lcores 0 --dev "path=$SOCK$DEV,mem_path=$MEDIUM${2:-}"; }
readback() { # NAME: a whole sequential read checked against the verify map
	expect_ok "$1" -q -s "$SOCK" --rw read --bs 128k --qd 8 --verify-map "$VMAP" --timeout 20000
}

start r0 || { ko "femud start on a new mem_path"; finish; }
grep -q "made anew" "$T/r0.log" && ok "new medium made" || ko "no 'made anew' in the log"
for r in $(seq 1 "$ROUNDS"); do
	gen=$((100 + r))
	"$BENCH" -q -s "$SOCK" $RW --verify-gen $gen --time 60 --timeout 3000 \
		>"$T/w$r.out" 2>"$T/w$r.err" &
	bpid=$!
	# wait until writes flow (bounded), then kill femud at a random moment
	for _ in $(seq 1 100); do
		[ "$(stat -c %s "$VMAP" 2>/dev/null || echo 0)" -gt 0 ] && break; sleep 0.1
	done
	sleep "0.$((RANDOM % 9 + 3))"
	kill -9 "$FEMUD_PID"
	wait "$bpid"
	brc=$?
	[ "$brc" -ne 0 ] && ok "round $r: femu-bench saw the kill (exit $brc)" ||
		ko "round $r: femu-bench exit 0 although femud was killed"
	start "r$r" || { ko "round $r: restart on the same mem_path"; finish; }
	grep -q "reused" "$T/r$r.log" && ok "round $r: medium reused" || ko "round $r: not reused"
	grep -o "rolled back\|BlackBox state [^:(]*" "$T/r$r.log" | sed "s/^/note: round $r: /"
	readback "round${r}_verify"
done
if [ "$MODE" = bbssd ]; then
	kill -USR1 "$FEMUD_PID"
	for _ in $(seq 1 50); do grep -q '^gc_runs' "$T/r$ROUNDS.log" && break; sleep 0.1; done
	gc=$(awk '$1 == "gc_runs" { print $2 }' "$T/r$ROUNDS.log" | tail -1)
	[ "${gc:-0}" -gt 0 ] && ok "GC active across the kills ($gc runs)" || ko "no GC run ($gc)"
fi
stop_femud
start fmt ",format=1" || { ko "format=1 start"; finish; }
grep -q "made anew" "$T/fmt.log" && ok "format=1 made the medium anew" || ko "format=1 log"
bench control -q -s "$SOCK" --rw read --bs 128k --qd 8 --verify-map "$VMAP" --timeout 20000
if [ "$RC" -eq 1 ] && grep -q "all zeros" "$T/control.err"; then
	ok "negative control: the verify map catches lost writes after format=1"
else
	ko "negative control: exit $RC"; cat "$T/control.err"
fi
stop_femud
finish
