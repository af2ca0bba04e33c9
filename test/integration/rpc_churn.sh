#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rpc_churn.sh - runtime create / delete leaks nothing: 200 cycles of
# femuctl create -> femu-bench write and read-back with --verify -> femuctl
# delete leave femud's open fds and RSS where they were after a warm-up of
# 20 cycles (fds equal, RSS within 4 MiB), and femud stays healthy.
# Args: femu-bench path, femuctl path.  Env: FEMUD, RPC_CHURN_CYCLES (200).
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl not built"; exit 1; }
CYCLES=${RPC_CHURN_CYCLES:-200}
WARM=20

start_femud_opts c --lcores 0 || { ko "femud start"; finish; }
fds() { ls "/proc/$FEMUD_PID/fd" 2>/dev/null | wc -l; }
# The fd count once it held still for 3 looks 0.1 s apart (up to 5 s): a
# connection rte_vhost's thread is still closing is not a leak.
fds_settled() {
	local n prev=-1 same=0
	for _ in $(seq 1 50); do
		n=$(fds)
		if [ "$n" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ $same -ge 2 ] && break
		prev=$n
		sleep 0.1
	done
	echo "$n"
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$FEMUD_PID/status" 2>/dev/null; }

bad=0
for i in $(seq 1 "$CYCLES"); do
	S=$T/churn$((i % 3)).sock
	if ! "$CTL" -s "$RPC" create "path=$S,devsz_mb=4,queues=2" >"$T/cycle.err" 2>&1 ||
		! timeout 60 "$BENCH" -q -s "$S" --rw write --bs 4k,16k --qd 4 --queues 2 --size 256K \
			--verify --verify-gen "$i" --timeout 20000 >>"$T/cycle.err" 2>&1 ||
		! timeout 60 "$BENCH" -q -s "$S" --rw read --bs 4k --qd 4 --queues 2 --size 256K \
			--verify --verify-gen "$i" --timeout 20000 >>"$T/cycle.err" 2>&1 ||
		! "$CTL" -s "$RPC" delete "$S" >>"$T/cycle.err" 2>&1; then
		bad=$((bad + 1))
		echo "cycle $i failed: $(cat "$T/cycle.err")"
		"$CTL" -s "$RPC" delete "$S" --force >/dev/null 2>&1
		[ $bad -ge 3 ] && break
	fi
	if [ "$i" = "$WARM" ]; then fd0=$(fds_settled) rss0=$(rss_kb); fi
done
fd1=$(fds_settled) rss1=$(rss_kb)
[ $bad -eq 0 ] && ok "$CYCLES create -> verify -> delete cycles" || ko "$bad cycles failed"
echo "after $WARM cycles: $fd0 fds, RSS $rss0 KiB; after $CYCLES: $fd1 fds, RSS $rss1 KiB"
[ "$fd1" = "$fd0" ] && ok "no fd leak ($fd0 -> $fd1)" || ko "fds $fd0 -> $fd1"
[ $((rss1 - rss0)) -lt 4096 ] && ok "RSS within 4 MiB ($rss0 -> $rss1 KiB)" ||
	ko "RSS grew by $((rss1 - rss0)) KiB"
n=$("$CTL" -s "$RPC" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" = 0 ] && [ -z "$(ls "$T"/churn*.sock 2>/dev/null)" ] && ok "no device or socket left" ||
	ko "$n devices left"
stop_femud
wait "$FEMUD_PID"; rc=$?
[ $rc -eq 0 ] && ok "clean stop (exit 0)" || ko "exit $rc: $(tail -5 "$T/c.log")"
finish
