#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# stop_stuck_poller.sh - a poller that does not return cannot keep femud
# from exiting: one poller thread is held in a ptrace stop (only that
# thread: PTRACE_SEIZE + PTRACE_INTERRUPT) while a frontend uses its queue,
# then SIGTERM.  femud must exit
# about 10 s later with status 3, after logging that poller (lcore, no
# sweep finished, its thread's state, its queues) and what it skipped (the
# image save of an image_save=1 device: the image file stays as it was);
# a second device on the other poller does not change that.  Then the same
# with no poller held: exit 0 at once, image saved.  $1: femu-bench.
# Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

# hold TID: stop that one thread of femud until this helper is killed or femud exits
hold() {
	python3 - "$1" <<'PY' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_SEIZE, PTRACE_INTERRUPT, WALL = 0x4206, 0x4207, 0x40000000
tid = int(sys.argv[1])
for req in (PTRACE_SEIZE, PTRACE_INTERRUPT):
    if libc.ptrace(req, tid, None, None) != 0:
        sys.exit("ptrace %#x: %s" % (req, os.strerror(ctypes.get_errno())))
os.waitpid(tid, WALL)
print("held", flush=True)
while True:  # stay its tracer (it stays stopped) until it exits
    _, st = os.waitpid(tid, WALL)
    if os.WIFEXITED(st) or os.WIFSIGNALED(st):
        break
PY
	HOLD_PID=$!
	pids+=("$HOLD_PID")
}

S1=$T/a.sock S2=$T/b.sock IMG=$T/a.img
start() {
	start_femud_opts "$1" --rpc none --lcores 0@0,1@0,2@0 \
		--dev "path=$S1,devsz_mb=16,queues=1,image=$IMG,image_save=1" \
		--dev "path=$S2,devsz_mb=16,queues=1"
}
# the thread of poller 0 (lcore 1)
poller_tid() {
	local t
	for t in /proc/"$FEMUD_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = rte-worker-1 ] && { echo "${t##*/}"; return 0; }
	done
	return 1
}

start s1 || { ko "femud start"; finish; }
expect_ok write -q -s "$S1" --rw write --bs 64k --qd 4 --size 1m --verify --timeout 30000
echo "old image" >"$IMG"
# a frontend keeps S1's queue on poller 0 while it is held
"$BENCH" -q -s "$S1" --rw randread --bs 4k --qd 4 --time 120 --timeout 120000 >"$T/bg.out" 2>&1 &
BG=$!
pids+=("$BG")
for _ in $(seq 1 100); do grep -q "$S1 queue 0: started" "$T/s1.log" && break; sleep 0.1; done
tid=$(poller_tid) || { ko "no thread rte-worker-1"; finish; }
hold "$tid" >"$T/hold.out" 2>&1
for _ in $(seq 1 100); do grep -q held "$T/hold.out" && break; sleep 0.1; done
if ! grep -q held "$T/hold.out"; then
	echo "SKIP: cannot ptrace a femud thread: $(cat "$T/hold.out")"
	kill "$FEMUD_PID"; exit 77
fi
t0=$(date +%s%N)
kill -TERM "$FEMUD_PID"
# bounded: the stop waits 10 s for the pollers
for _ in $(seq 1 300); do kill -0 "$FEMUD_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$FEMUD_PID" 2>/dev/null; then
	ko "femud did not exit within 30 s of SIGTERM with a poller held"
	femud_threads "$FEMUD_PID"
	finish
fi
wait "$FEMUD_PID"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -eq 3 ] && ok "exit status 3 with a poller held" || ko "exit status $rc, expected 3"
[ "$ms" -ge 9500 ] && [ "$ms" -le 25000 ] && ok "exited after the 10 s bound ($ms ms)" ||
	ko "exited after $ms ms, expected about 10 s"
grep -q "poller 0 (lcore 1) did not stop within 10\.[0-9] s: no sweep finished" "$T/s1.log" &&
	ok "the held poller is named" || ko "no report of poller 0: $(tail -5 "$T/s1.log")"
grep "did not stop within" "$T/s1.log" | grep -q "thread $tid state t, .* its queues: $S1 queue 0" &&
	ok "its thread state (t: traced) and its queue are logged" ||
	ko "thread state / queues: $(grep 'did not stop' "$T/s1.log")"
grep -q "poller 1 (lcore 2) did not stop" "$T/s1.log" && ko "poller 1 reported as stuck" ||
	ok "the other poller stopped"
grep -q "dev $S1: image save at stop (image_save=1) skipped" "$T/s1.log" &&
	ok "the skipped image save is logged" || ko "no image save note: $(tail -5 "$T/s1.log")"
grep -q "1 poller did not stop within 10 s: exiting with status 3" "$T/s1.log" &&
	ok "the exit is explained" || ko "no exit line: $(tail -3 "$T/s1.log")"
[ "$(cat "$IMG")" = "old image" ] && ok "image file unchanged" || ko "image file was written"
wait "$HOLD_PID" 2>/dev/null
kill -9 "$BG" 2>/dev/null
wait "$BG" 2>/dev/null

# No poller held: a clean stop, the image saved.
rm -f "$IMG"
start s2 || { ko "femud restart"; finish; }
expect_ok write2 -q -s "$S1" --rw write --bs 64k --qd 4 --size 1m --verify --timeout 30000
kill -TERM "$FEMUD_PID"
for _ in $(seq 1 300); do kill -0 "$FEMUD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$FEMUD_PID"
rc=$?
[ "$rc" -eq 0 ] && ok "clean stop: exit 0" || ko "clean stop: exit $rc"
grep -q "did not stop" "$T/s2.log" && ko "a poller reported stuck on a clean stop" ||
	ok "no stuck report on a clean stop"
[ -s "$IMG" ] && [ "$(head -c 9 "$IMG")" != "old image" ] && ok "image saved at a clean stop" ||
	ko "no image saved at the clean stop"
finish
