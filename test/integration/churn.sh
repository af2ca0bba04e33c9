#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# churn.sh - control-path churn against one femud (2 pollers, a NoSSD and a
# small BlackBox SSD): femu-bench clients SIGKILLed mid-run on both devices
# at once, many times (requests in flight, completions in the BlackBox
# timer heap), interleaved with --hostile cases.  Afterwards femud must be
# alive, serve a verified write + read on both devices, hold no more fds
# and not much more memory than after a warm-up round, and stop on SIGTERM
# within seconds, clients still connected, with its sockets removed.  $1: femu-bench.  Env: FEMUD,
# CHURN_SECS (length of the kill loop, default 20).
. "$(dirname "$0")/femu_bench_lib.sh"

S1=$T/nossd.sock S2=$T/bbssd.sock
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
BB="$BB,pg_rd_lat=20000,pg_wr_lat=50000,blk_er_lat=100000,queues=4"
start_femud_opts f --lcores 0@0,1@0,2@1 --dev "path=$S1,devsz_mb=64,queues=4" \
	--dev "path=$S2,$BB" || { ko "femud start"; finish; }

fds() { ls "/proc/$FEMUD_PID/fd" 2>/dev/null | wc -l; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$FEMUD_PID/status" 2>/dev/null; }
alive() { kill -0 "$FEMUD_PID" 2>/dev/null; }
# On failure: where each femud thread is (a hang shows here) and the log's end.
diag() {
	for t in /proc/"$FEMUD_PID"/task/*; do
		echo "thread $(cat "$t/comm" 2>/dev/null): state $(awk '{ print $3 }' "$t/stat" 2>/dev/null)" \
			"wchan $(cat "$t/wchan" 2>/dev/null)"
	done
	tail -20 "$T/f.log"
}

# One round: a client on each device, SIGKILLed after $1 s with I/O in flight.
kill_round() {
	local t=$1 n=$2
	timeout -s KILL "$t" "$BENCH" -q -s "$S1" --rw randrw --bs 4k,64k --qd 32 --queues 4 \
		--time 5 --seed "$n" >/dev/null 2>&1 &
	local a=$!
	timeout -s KILL "$t" "$BENCH" -q -s "$S2" --rw randwrite --bs 4k,16k --qd 32 --queues 4 \
		--time 5 --seed "$n" >/dev/null 2>&1 &
	local b=$!
	wait "$a" "$b" 2>/dev/null
}

# Hostile cases that leave a connection mid-flight or churn the control messages.
HCASES=(disconnect_in_flight mem_table_shrunk_while_running chain_loop truncated_payload
	vring_before_mem_table fd_flood oversized_message get_vring_base_out_of_range)

# Warm-up: every path once (connection, queues, heap, hostile), then the baseline.
kill_round 0.5 0
for s in "$S1" "$S2"; do
	timeout 60 "$BENCH" -s "$s" --hostile --case disconnect_in_flight >/dev/null 2>&1
done
sleep 0.5
fd0=$(fds) rss0=$(rss_kb)
echo "baseline: $fd0 fds, RSS $rss0 kB"

secs=${CHURN_SECS:-20}
end=$((SECONDS + secs)) rounds=0 hostile=0 hfail=0 dead=0
while [ "$SECONDS" -lt "$end" ]; do
	rounds=$((rounds + 1))
	kill_round "0.$((2 + rounds % 4))" "$rounds"
	if [ $((rounds % 3)) -eq 0 ]; then
		c=${HCASES[$(((rounds / 3) % ${#HCASES[@]}))]}
		s=$S1
		[ $((rounds % 2)) -eq 0 ] && s=$S2
		hostile=$((hostile + 1))
		if ! timeout 60 "$BENCH" -s "$s" --hostile --case "$c" >"$T/h.out" 2>&1; then
			hfail=$((hfail + 1))
			echo "hostile $c on $(basename "$s"): $(tail -3 "$T/h.out")"
		fi
	fi
	alive || { dead=1; break; }
done
[ "$dead" -eq 0 ] && ok "femud alive after $rounds kill rounds and $hostile hostile runs" ||
	{ ko "femud died in round $rounds"; tail -20 "$T/f.log"; finish; }
[ "$hfail" -eq 0 ] || diag
[ "$hfail" -eq 0 ] && ok "hostile cases passed during churn" || ko "$hfail hostile runs failed"

# Both devices still serve, verified, on every queue.
expect_ok verify_w_nossd -q -s "$S1" --rw write --bs 4k,64k --qd 16 --queues 4 --size 16M \
	--verify --verify-gen 7 --timeout 10000
expect_ok verify_r_nossd -q -s "$S1" --rw read --bs 128k --qd 8 --queues 4 --size 16M \
	--verify --verify-gen 7 --timeout 10000
expect_ok verify_w_bbssd -q -s "$S2" --rw write --bs 16k --qd 16 --queues 4 --size 4M \
	--verify --verify-gen 7 --timeout 10000
expect_ok verify_r_bbssd -q -s "$S2" --rw read --bs 64k --qd 8 --queues 4 --size 4M \
	--verify --verify-gen 7 --timeout 10000
[ "$fail" -eq 0 ] || diag

sleep 0.5
fd1=$(fds) rss1=$(rss_kb)
echo "after churn: $fd1 fds, RSS $rss1 kB"
[ "$fd1" -le $((fd0 + 4)) ] && ok "fds bounded ($fd0 -> $fd1)" || {
	ko "fd leak: $fd0 -> $fd1"
	ls -l "/proc/$FEMUD_PID/fd" | awk '{ print $9, $10, $11 }' | tail -20
}
[ "$rss1" -le $((rss0 + 20480)) ] && ok "RSS bounded (${rss0} -> ${rss1} kB)" ||
	ko "RSS grew: ${rss0} -> ${rss1} kB"

# SIGTERM while both devices serve live clients (BlackBox heap non-empty).
timeout -s KILL 40 "$BENCH" -q -s "$S1" --rw randrw --qd 32 --queues 4 --time 30 >/dev/null 2>&1 &
c1=$!
timeout -s KILL 40 "$BENCH" -q -s "$S2" --rw randwrite --qd 32 --queues 4 --time 30 >/dev/null 2>&1 &
c2=$!
pids+=("$c1" "$c2")
sleep 1
kill -TERM "$FEMUD_PID"
t0=$SECONDS
for _ in $(seq 1 50); do alive || break; sleep 0.1; done
if alive; then
	ko "femud still running 5 s after SIGTERM with live clients"
	diag
	kill -9 "$FEMUD_PID"
else
	wait "$FEMUD_PID"
	rc=$?
	[ "$rc" -eq 0 ] && ok "SIGTERM with live clients: exit 0 in $((SECONDS - t0)) s" || {
		ko "SIGTERM: exit $rc"
		tail -20 "$T/f.log"
	}
fi
kill "$c1" "$c2" 2>/dev/null
wait "$c1" "$c2" 2>/dev/null
[ ! -e "$S1" ] && [ ! -e "$S2" ] && ok "sockets removed" || ko "sockets left behind"
grep -q 'device .* connections' "$T/f.log" && ok "counters printed at exit" || ko "no counters"
finish
