#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rpc_femuctl.sh - femud driven only through its control socket with
# femuctl: an empty daemon gets a NoSSD and a BlackBox device at runtime,
# femu-bench verifies data on them, stats show the requests, a latency set
# at runtime moves femu-bench's QD1 median by that much, bad input gets the
# RPC error (and its exit status) and changes nothing, delete refuses a
# connected device unless --force, save-config restarts femud with the same
# devices (combined with --dev), and a stalled, oversized or malformed
# client neither stops femud nor delays another client.
# Args: femu-bench path, femuctl path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl not built"; exit 1; }

A=$T/a.sock B=$T/b.sock
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25,queues=2"
BB="$BB,pg_rd_lat=1000,pg_wr_lat=2000,blk_er_lat=5000"
start_femud_opts d --lcores 0 --mbe-node 0 --rpc "$T/d.rpc" || { ko "empty femud start"; finish; }
ctl() { "$CTL" -s "$RPC" "$@"; }
# expect_ctl NAME STATUS NEEDLE ARGS...: femuctl exits STATUS with NEEDLE in its output
expect_ctl() {
	local name=$1 status=$2 needle=$3 rc; shift 3
	ctl "$@" >"$T/$name.ctl" 2>&1; rc=$?
	if [ $rc -eq "$status" ] && { [ -z "$needle" ] || grep -qF -- "$needle" "$T/$name.ctl"; }; then
		ok "$name"; else
		ko "$name (exit $rc, expected $status with '$needle'): $(cat "$T/$name.ctl")"; fi
}
ndevs() { ctl list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# jq-like: python expression over femuctl's JSON on stdin
pj() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

[ "$(stat -c %a "$RPC")" = 600 ] && ok "control socket mode 0600" || ko "mode $(stat -c %a "$RPC")"
[ "$(ndevs)" = 0 ] && ok "femud --rpc with no --dev starts empty" || ko "not empty"

expect_ctl create_nossd 0 "" create "path=$A,devsz_mb=32,queues=2"
expect_ctl create_bbssd 0 "" create "path=$B,$BB"
[ -S "$A" ] && [ -S "$B" ] && ok "runtime devices listen" || ko "sockets missing"
ctl list >"$T/list.txt" && grep -q "$A .*nossd" "$T/list.txt" && grep -q "$B .*bbssd" "$T/list.txt" &&
	ok "list shows both devices" || ko "list: $(cat "$T/list.txt")"

node=$(ctl list "$A" --json | pj 'd[0]["backend_node"]')
[ "$node" = 0 ] && grep -q "dev $A: 32 MiB backend on node 0 (" "$T/d.log" &&
	ok "runtime backend placed and checked on --mbe-node 0" || ko "backend node $node: $(grep backend "$T/d.log")"

# bad input: the RPC error, femuctl's exit status, nothing changes
expect_ctl dup_path 4 "socket path '$A' is already a device's" create "path=$A,devsz_mb=8"
expect_ctl bad_queues 6 "bad value '99' for key 'queues'" create "path=$T/c.sock,queues=99"
expect_ctl bad_model_key 6 "nchs=0" create "path=$T/c.sock,femu_mode=1,nchs=0"
expect_ctl unknown_key 6 "frob" create "path=$T/c.sock,femu_mode=1,frob=1"
expect_ctl no_path 6 "the key 'path' (socket path) is required" create "devsz_mb=8"
expect_ctl delete_unknown 3 "no device on socket '$T/none.sock'" delete "$T/none.sock"
expect_ctl stats_unknown 3 "no device" stats "$T/none.sock"
expect_ctl set_geometry 6 "nchs=4: cannot change while the device runs" set "$B" nchs=4
expect_ctl set_range 6 "pg_rd_lat=99999999999: out of range" set "$B" pg_rd_lat=99999999999
expect_ctl set_notnum 6 "pg_wr_lat=abc: not a non-negative decimal number" set "$B" pg_wr_lat=abc
expect_ctl set_nossd 6 "model nossd has no parameters that change at runtime" set "$A" pg_rd_lat=1
expect_ctl unknown_method 1 "method 'frob' not found" call frob
expect_ctl bad_params 6 "'path' must be a string, not a number" call delete '{"path":5}'
expect_ctl extra_param 6 "unknown parameter 'x'" call list '{"x":1}'
[ "$(ndevs)" = 2 ] && [ ! -e "$T/c.sock" ] && ok "failed requests changed nothing" || ko "devices changed"

# data through the runtime devices, counted in stats
Q="-q --verify --timeout 5000"
expect_ok a_write $Q -s "$A" --rw write --bs 4k,64k --qd 8 --queues 2 --verify-gen 3
expect_ok a_read $Q -s "$A" --rw randread --bs 4k --qd 8 --queues 2 --ios 5000 --verify-gen 3
expect_ok b_write $Q -s "$B" --rw write --bs 4k --qd 4 --size 1M --verify-gen 4
req=$(ctl stats "$A" --json | pj 'd["devices"][0]["totals"]["requests"]')
[ "${req:-0}" -ge 5000 ] && ok "stats count the requests ($req)" || ko "stats requests: $req"
ctl stats --queues >"$T/stats.txt" && grep -q "^$A " "$T/stats.txt" && grep -q "^POLLER" "$T/stats.txt" &&
	grep -Eq "^  q1 +[0-9]+ .* poller ([0-9]+|-) calls" "$T/stats.txt" &&
	ok "stats table" || ko "stats table: $(cat "$T/stats.txt")"
wa=$(ctl stats "$B" --json | pj 'd["devices"][0]["model_stats"]["write_amplification"]')
python3 -c "import sys; sys.exit(0 if abs($wa - 1.0) < 0.01 else 1)" && ok "BlackBox counters (WA $wa)" ||
	ko "WA $wa"
ctl stats --watch 0.2 --count 2 --json >"$T/watch.txt" 2>&1 &&
	[ "$(grep -c '"iops"' "$T/watch.txt")" = 4 ] && ok "stats --watch prints rates" ||
	ko "watch: $(cat "$T/watch.txt")"
expect_ctl reset 0 "" stats-reset "$A"
req=$(ctl stats "$A" --json | pj 'd["devices"][0]["totals"]["requests"]')
[ "$req" = 0 ] && ok "stats-reset zeroes a device" || ko "after reset: $req"

# a latency changed at runtime moves the QD1 median by that much (reads of written
# pages; the lowest median of five runs, as other work on this machine only adds).
# femu-bench on the CPU femud's poller (lcore 0, CPU 0) is not on: sharing it, each
# completion waits for a scheduler time slice (medians of 8 ms seen under load)
BCPU=$(($(nproc) > 1 ? 1 : 0))
p50() {
	for _ in 1 2 3 4 5; do
		"$BENCH" -q -s "$B" --cpus "$BCPU" --rw randread --bs 4k --qd 1 --size 1M --ios "$1" --timeout 30000 \
			--json | pj 'd["lat_us"]["p50"]'
	done | sort -g | head -1
}
before=$(p50 1000)
expect_ctl set_lat 0 "" set "$B" pg_rd_lat=201000
after=$(p50 300)
python3 -c "import sys; d=$after-$before; sys.exit(0 if 150 <= d <= 350 else 1)" &&
	ok "pg_rd_lat +200 us moved the QD1 median from $before to $after us" ||
	ko "QD1 median $before -> $after us (expected +200)"
expect_ctl set_back 0 "" set "$B" pg_rd_lat=1000

# save-config, then restart from it (with one more --dev)
expect_ctl set_lat2 0 "" set "$B" pg_rd_lat=101000
expect_ctl save 0 "" save-config "$T/cfg.json"
pj 'd["devices"][1]["pg_rd_lat"]' <"$T/cfg.json" | grep -qx 101000 && ok "saved config has the runtime latency" ||
	ko "config: $(cat "$T/cfg.json")"

# a started queue shows where it stands: with 101 us reads at QD 8, requests are
# taken and not completed; avail_next - used_next is that count (the three are
# read while the poller runs, used first: a sample caught between two stores may
# count a completion and a new request too, never less than nothing; samples
# with nothing pending, as when femu-bench waits for its CPU, prove nothing)
"$BENCH" -q -s "$B" --cpus "$BCPU" --rw randread --bs 4k --qd 8 --size 1M --time 60 --timeout 5000 \
	>/dev/null 2>&1 &
bpid=$!
for _ in $(seq 1 100); do
	[ "$(ctl list "$B" --json | pj 'd[0]["connected"]')" = 1 ] && break; sleep 0.1
done
sleep 0.5
pos_ok=0 pos_bad= n=0
for _ in $(seq 1 100); do
	n=$((n + 1))
	v=$(ctl stats "$B" --json | pj '" ".join(str(q.get(k, "-")) for q in d["devices"][0]["queues"]
		for k in ("poller", "avail_next", "used_next", "pending"))')
	set -- $v
	if [ "$1" -ge 0 ] 2>/dev/null && [ "$5 $6 $7 $8" = "-1 - - -" ] &&
		[ "$4" -ge 1 ] && [ "$4" -le 8 ] && [ $((($2 - $3) & 65535)) = "$4" ]; then
		pos_ok=$((pos_ok + 1))
	elif ! [ "$1" -ge 0 ] 2>/dev/null || [ "$4" -gt 8 ] || [ $((($2 - $3) & 65535)) -gt 12 ]; then
		pos_bad="$pos_bad [$v]"
	fi
	[ "$pos_ok" -ge 5 ] && break
	sleep 0.05
done
kill $bpid 2>/dev/null
wait $bpid
[ "$pos_ok" -ge 5 ] && [ -z "$pos_bad" ] &&
	ok "stats show where a started queue stands ($pos_ok of $n samples: 1-8 pending = avail_next - used_next; q1 not started: none)" ||
	ko "queue position: $pos_ok consistent samples, impossible ones:$pos_bad"
ctl stats "$B" --json | pj '"avail_next" in d["devices"][0]["queues"][0]' | grep -qx False &&
	ok "a queue whose frontend left shows no position" || ko "position of a stopped queue shown"

# delete: refused while connected, --force closes the connection
timeout 60 "$BENCH" -q -s "$A" --rw randread --qd 4 --time 30 --timeout 2000 >/dev/null 2>&1 &
bpid=$!
for _ in $(seq 1 100); do
	[ "$(ctl list "$A" --json | pj 'd[0]["connected"]')" = 1 ] && break; sleep 0.1
done
expect_ctl delete_busy 5 "has a frontend connected" delete "$A"
[ "$(ndevs)" = 2 ] && ok "refused delete kept the device" || ko "device gone"
expect_ctl delete_force 0 "" delete "$A" --force
wait $bpid; brc=$?
[ $brc -ne 0 ] && [ $brc -ne 124 ] && ok "forced delete closed the frontend's connection (femu-bench exit $brc)" ||
	ko "femu-bench after forced delete: exit $brc"
[ "$(ndevs)" = 1 ] && [ ! -e "$A" ] && ok "deleted device and socket are gone" || ko "delete left $(ndevs)"
kill -0 "$FEMUD_PID" && ok "femud alive after forced delete" || ko "femud died"

# misbehaving clients: a stalled half request, an oversized one, malformed JSON
python3 - "$RPC" "$CTL" >"$T/clients.txt" 2>&1 <<'PYEOF'
import json, socket, subprocess, sys, time
rpc, ctl = sys.argv[1], sys.argv[2]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(rpc); s.settimeout(15); return s
def reply(s):
    b = b""
    while not b.endswith(b"\n"):
        c = s.recv(65536)
        if not c: break
        b += c
    return json.loads(b) if b else None
stall = conn(); stall.sendall(b'{"jsonrpc":"2.0","id":1,"method":"li')
t0 = time.time()
r = subprocess.run([ctl, "-s", rpc, "list", "--json"], capture_output=True, timeout=10)
dt = time.time() - t0
print("other client while one stalls: rc %d in %.2f s" % (r.returncode, dt))
print("OK-other" if r.returncode == 0 and dt < 3 else "BAD-other")
r = reply(stall)
print("stalled:", r)
print("OK-stall" if r and r["error"]["code"] == -32700 and "incomplete" in r["error"]["message"] else "BAD-stall")
big = conn(); big.sendall(b'{"jsonrpc":"2.0","id":1,"method":"list","params":{"x":"' + b"a" * 70000)
r = reply(big)
print("big:", r)
print("OK-big" if r and r["error"]["code"] == -32600 and "larger than" in r["error"]["message"] else "BAD-big")
bad = conn(); bad.sendall(b'{"jsonrpc" 2.0}\n')
r = reply(bad)
print("OK-parse" if r and r["error"]["code"] == -32700 else "BAD-parse", r)
PYEOF
for k in other stall big parse; do
	grep -q "^OK-$k" "$T/clients.txt" && ok "client $k" || ko "client $k: $(cat "$T/clients.txt")"
done

# a second femud on the same control socket is refused; the first keeps it
"$FEMUD" --no-huge --lcores 0 --rpc "$RPC" --dev "path=$T/x.sock,devsz_mb=8" >"$T/second.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "in use by a live process" "$T/second.log" && ok "second femud on the same --rpc: exit 2" ||
	ko "second femud: exit $rc $(cat "$T/second.log")"
[ "$(ndevs)" = 1 ] && ok "first femud still answers" || ko "first femud lost"

stop_femud
[ ! -e "$RPC" ] && ok "control socket removed at exit" || ko "control socket left"
start_femud_opts r --lcores 0 --config "$T/cfg.json" --dev "path=$T/e.sock,devsz_mb=8" ||
	{ ko "restart from config"; finish; }
[ "$(ndevs)" = 3 ] && ok "--config and --dev combine (3 devices)" || ko "restart: $(ctl list)"
expect_ok b_rewrite -q -s "$B" --rw write --bs 4k --qd 4 --size 1M --verify --verify-gen 5
after=$(p50 300)
python3 -c "import sys; sys.exit(0 if $after >= 90 else 1)" &&
	ok "restarted BlackBox keeps pg_rd_lat=101000 (QD1 median $after us)" || ko "median $after us"
finish
