#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon_cli.sh - femud as a user meets it: --help/--version, bad options
# (exit 2, message names the option), --dry-run, and the socket lifecycle:
# mode bits, a path in use refused, a stale socket replaced, SIGTERM/SIGINT
# exit 0 and remove the socket.  Env: FEMUD (path of femud).
set -u
FEMUD=${FEMUD:?FEMUD not set}
T=$(mktemp -d /tmp/femud-cli.XXXXXX)
pass=0 fail=0
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_usage_error NEEDLE ARGS... : exit status 2 and NEEDLE in stderr, socket not created
expect_usage_error() {
	local needle=$1; shift
	local out rc
	out=$("$FEMUD" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$needle" <<<"$out"; then ok "exit 2 naming '$needle': $*"
	else ko "'$*': rc=$rc, stderr: $out"; fi
}

"$FEMUD" --help | grep -q -- '--mbe-node' && ok "--help lists options" || ko "--help"
"$FEMUD" --version | grep -Eq '^femud [0-9]' && ok "--version" || ko "--version"

expect_usage_error "--dev" 
expect_usage_error "devsz_mb" --dev "path=$T/a.sock,devsz_mb=lots"
expect_usage_error "queues" --dev "path=$T/a.sock,queues=100"
expect_usage_error "secsz" --dev "path=$T/a.sock,secsz=1000"
expect_usage_error "femu_mode" --dev "path=$T/a.sock,femu_mode=0"
expect_usage_error "colour" --dev "path=$T/a.sock,colour=blue"
expect_usage_error "path" --dev "devsz_mb=4"
expect_usage_error "--mbe-node" --mbe-node 999 --dev "path=$T/a.sock,devsz_mb=4"
expect_usage_error "--mbe-node" --mbe-node x --dev "path=$T/a.sock,devsz_mb=4"
expect_usage_error "--lcores" --lcores "1-" --dev "path=$T/a.sock,devsz_mb=4"
expect_usage_error "--lcores" --lcores "0@4095" --dev "path=$T/a.sock,devsz_mb=4"
expect_usage_error "--nonsense" --nonsense
[ ! -e "$T/a.sock" ] && ok "no socket created by a refused command line" || ko "socket created"

out=$("$FEMUD" --dry-run --lcores 0@0 --mbe-node 0 --dev "path=$T/a.sock,devsz_mb=8,queues=2")
if [ $? -eq 0 ] && grep -q "dev $T/a.sock model=nossd capacity=8388608" <<<"$out"; then
	ok "--dry-run prints the plan"; else ko "--dry-run: $out"; fi

# A backend larger than the machine's memory: refused before anything is touched.
out=$("$FEMUD" --no-huge --rpc none --lcores 0@0 --dev "path=$T/big.sock,devsz_mb=16000000" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "devsz_mb=16000000: backend memory: .*available" <<<"$out" && [ ! -e "$T/big.sock" ]; then
	ok "a backend larger than the memory is refused: $out"; else ko "huge backend: rc=$rc: $out"; fi

# --lcores auto: pollers on the backend's node, away from CPU 0 when the host has room.
out=$("$FEMUD" --dry-run --lcores auto --mbe-node 0 --dev "path=$T/a.sock,devsz_mb=8" 2>&1); rc=$?
if [ $rc -eq 0 ] && { [ "$(nproc)" -lt 2 ] || ! grep -Eq '^lcores .*@0(,|$| )' <<<"$out"; }; then
	ok "--lcores auto avoids CPU 0: $(head -1 <<<"$out")"; else ko "--lcores auto: rc=$rc $out"; fi
expect_usage_error "auto:0" --lcores auto:0 --dev "path=$T/a.sock,devsz_mb=8"
expect_usage_error "requested" --lcores auto:100 --dev "path=$T/a.sock,devsz_mb=8"

# wait_log REGEX FILE: up to 10 s for a line to appear (control work runs on femud's own threads)
wait_log() {
	for _ in $(seq 1 100); do grep -Eq -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

# start_femud NAME ARGS...: start in the background (pid in $pid), wait for "femud: ready"
start_femud() {
	local name=$1; shift
	"$FEMUD" --no-huge --rpc none --lcores 0@0 "$@" >"$T/$name.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 1 150); do
		grep -q '^femud: ready' "$T/$name.log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

if start_femud first --dev "path=$T/f.sock,devsz_mb=16"; then
	ok "femud starts and says ready"
	mode=$(stat -c %a "$T/f.sock")
	[ "$mode" = 600 ] && ok "socket mode 0600 by default" || ko "socket mode $mode"
	out=$("$FEMUD" --no-huge --rpc none --lcores 0@0 --dev "path=$T/f.sock,devsz_mb=16" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q "$T/f.sock" <<<"$out"; then ok "a second femud on a live socket path refuses (rc=$rc)"
	else ko "second femud on a live path: rc=$rc: $out"; fi
	kill -0 "$pid" 2>/dev/null && ok "the first femud still runs" || ko "first femud died"
	# A frontend allowed on the poller's CPU is named (pid from SO_PEERCRED).
	taskset -c 0 python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(20)' "$T/f.sock" &
	cpid=$!
	wait_log "frontend pid $cpid: poller CPU 0" "$T/first.log" && ok "a frontend on the poller's CPU is warned about" ||
		ko "no placement warning for frontend $cpid: $(grep placement "$T/first.log")"
	kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
	kill -USR1 "$pid"
	if wait_log "^device $T/f.sock connections [1-9]" "$T/first.log" && kill -0 "$pid" 2>/dev/null; then
		ok "SIGUSR1 prints the counters and femud goes on"; else ko "SIGUSR1: $(tail -3 "$T/first.log")"; fi
	kill -TERM "$pid"; wait "$pid"; rc=$?
	[ $rc -eq 0 ] && ok "SIGTERM: exit 0" || ko "SIGTERM: exit $rc"
	[ ! -e "$T/f.sock" ] && ok "socket removed at exit" || ko "socket left behind"
else
	ko "femud did not start: $(cat "$T/first.log")"
fi

# A stale socket file (no listener) is replaced.
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$T/stale.sock"
if start_femud stale --dev "path=$T/stale.sock,devsz_mb=8,sock_mode=0660"; then
	ok "a stale socket file is replaced"
	mode=$(stat -c %a "$T/stale.sock")
	[ "$mode" = 660 ] && ok "sock_mode=0660 honoured" || ko "socket mode $mode, wanted 660"
	kill -INT "$pid"; wait "$pid"; rc=$?
	[ $rc -eq 0 ] && ok "SIGINT: exit 0" || ko "SIGINT: exit $rc"
else
	ko "femud refused a stale socket: $(cat "$T/stale.log")"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
