#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# poll_mode_rpc.sh - poll modes per poller and at runtime: femud starts with
# "--poll-mode busy,adaptive" on two pollers, femuctl poll-mode shows it,
# an idle adaptive poller sleeps and a busy one never does, femuctl switches
# one poller and then all of them while a frontend is connected (femu-bench
# verify passes across every switch), bad values get exit status 6 and
# change nothing, and save-config carries the modes into a restart.
# Args: femu-bench path, femuctl path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl not built"; exit 1; }
ctl() { "$CTL" -s "$RPC" "$@"; }
pj() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# poller I's member KEY from femuctl stats --json
pstat() { ctl stats --json | pj "d['pollers'][$1]['$2']"; }
# wait_sleeps I: poller I sleeps now, or its sleep count grows, within 5 s
wait_sleeps() {
	local s0
	s0=$(pstat "$1" sleeps)
	for _ in $(seq 1 50); do
		[ "$(pstat "$1" sleeping)" = 1 ] || [ "$(pstat "$1" sleeps)" -gt "$s0" ] && return 0
		sleep 0.1
	done
	return 1
}
# no_sleeps I: poller I does not sleep for 0.5 s
no_sleeps() {
	local s0
	s0=$(pstat "$1" sleeps)
	sleep 0.5
	[ "$(pstat "$1" sleeps)" = "$s0" ] && [ "$(pstat "$1" sleeping)" = 0 ]
}
A=$T/a.sock
start_femud_opts d --lcores 0@0,1@0,2@1 --poll-mode busy,adaptive --idle-us 30,200 \
	--dev "path=$A,devsz_mb=16,queues=2" || { ko "femud start"; finish; }
grep -q "poller 0 (lcore 1): poll-mode busy" "$T/d.log" &&
	grep -q "poller 1 (lcore 2): poll-mode adaptive (idle 200 us)" "$T/d.log" &&
	ok "the plan names each poller's mode" || ko "plan: $(grep poll-mode "$T/d.log")"
ctl poll-mode >"$T/pm.txt" && grep -Eq "^0 +[0-9]+ +busy +30$" "$T/pm.txt" &&
	grep -Eq "^1 +[0-9]+ +adaptive +200$" "$T/pm.txt" &&
	ok "femuctl poll-mode shows busy,adaptive with 30,200 us" || ko "poll-mode: $(cat "$T/pm.txt")"
wait_sleeps 1 && ok "the idle adaptive poller sleeps" || ko "poller 1 never slept"
no_sleeps 0 && ok "the busy poller never sleeps" || ko "poller 0 slept"

# switch poller 0 to adaptive, poller 1 to busy, while a frontend runs verify
bench fill -s "$A" --rw write --bs 64k --qd 8 --size 4M --verify
[ "$RC" = 0 ] && ok "verify write pass" || ko "verify write pass: $(tail -3 "$T/fill.err")"
timeout 60 "$BENCH" -s "$A" --rw randrw --bs 4k --qd 8 --queues 2 --size 4M --time 3 --verify \
	>"$T/v1.out" 2>"$T/v1.err" &
BP=$!
sleep 0.5
ctl poll-mode adaptive idle_us=50 poller=0 >/dev/null &&
	ctl poll-mode busy poller=1 >/dev/null && ok "switched both pollers under I/O" || ko "switch failed"
wait $BP && ok "verify across the switch" || ko "verify across the switch: $(tail -3 "$T/v1.err")"
bench v2 -s "$A" --rw randread --bs 4k --qd 8 --queues 2 --size 4M --ios 4000 --verify
[ "$RC" = 0 ] && ok "verify after the switch" || ko "verify after the switch: $(tail -3 "$T/v2.err")"
wait_sleeps 0 && ok "poller 0 sleeps once adaptive" || ko "poller 0 did not sleep"
no_sleeps 1 && ok "poller 1 no longer sleeps once busy" || ko "poller 1 still sleeps"

# all pollers, idle threshold only: modes stay
ctl poll-mode idle_us=75 --json | pj "[(p['poll_mode'], p['idle_us']) for p in d['pollers']]" >"$T/all.txt"
grep -qF "[('adaptive', 75), ('busy', 75)]" "$T/all.txt" && ok "idle_us alone keeps each mode" ||
	ko "idle_us alone: $(cat "$T/all.txt")"

# bad values: exit 6 and nothing changes
for bad in '{"mode":"fast"}' '{"poller":9}' '{"idle_us":2000000}' '{"idle_us":-1}' '{"x":1}'; do
	ctl call poll_mode "$bad" >"$T/bad.txt" 2>&1
	[ $? = 6 ] && ok "poll_mode $bad refused" || ko "poll_mode $bad: $(cat "$T/bad.txt")"
done
"$CTL" -s "$RPC" poll-mode sometimes >/dev/null 2>&1; [ $? = 2 ] && ok "femuctl poll-mode usage error" || ko "bad word accepted"
ctl poll-mode --json | pj "[(p['poll_mode'], p['idle_us']) for p in d['pollers']]" >"$T/after.txt"
cmp -s "$T/all.txt" "$T/after.txt" && ok "refused calls changed nothing" || ko "changed: $(cat "$T/after.txt")"

# save-config carries the modes; a restart takes them; the command line wins
ctl save-config "$T/cfg.json" && python3 -c "
import json,sys; c=json.load(open('$T/cfg.json'))
sys.exit(0 if c['pollers']==[{'poll_mode':'adaptive','idle_us':75},{'poll_mode':'busy','idle_us':75}] else 1)" &&
	ok "save-config writes the pollers' modes" || ko "config: $(cat "$T/cfg.json")"
stop_femud
start_femud_opts r --lcores 0@0,1@0,2@1 --config "$T/cfg.json" || { ko "restart from config"; finish; }
grep -q "poller 0 (lcore 1): poll-mode adaptive (idle 75 us)" "$T/r.log" &&
	grep -q "poller 1 (lcore 2): poll-mode busy" "$T/r.log" &&
	ok "--config restores each poller's mode" || ko "restart plan: $(grep poll-mode "$T/r.log")"
stop_femud
start_femud_opts c --lcores 0@0,1@0,2@1 --config "$T/cfg.json" --poll-mode busy ||
	{ ko "restart with --poll-mode"; finish; }
grep -q "poller 0 (lcore 1): poll-mode busy" "$T/c.log" &&
	grep -q "poller 1 (lcore 2): poll-mode busy" "$T/c.log" &&
	ok "--poll-mode on the command line wins over the file" || ko "plan: $(grep poll-mode "$T/c.log")"
stop_femud
finish
