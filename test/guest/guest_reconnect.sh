#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_reconnect.sh - QEMU connects with a 1 s reconnect; while the guest runs
# random writes femud is killed (SIGKILL, requests in flight) and started
# again on the same path: the stale socket is replaced, QEMU reconnects,
# requests femud had taken are replayed from the inflight region, and fio
# finishes without an I/O error.  A BlackBox device is used so that
# completions are deferred and requests are usually in flight at the kill.
# As a stress run (not CI): GR_KILLS=5 GR_RUNTIME=45 kills and restarts femud
# five times, 2-6 s apart, during a 45-s fio; loop it for rare failures.
. "$(dirname "$0")/lib.sh"
GR_KILLS=${GR_KILLS:-1}
GR_RUNTIME=${GR_RUNTIME:-14}
skip_unless_ready
S=/tmp/pmd-gr-$$.sock
DEV="path=$S,queues=1,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=32,pgs_per_blk=64,op_pcent=25"
start_femud "$DEV"

guest --qemu-arg -chardev --qemu-arg "$(reconnect_chardev rc0 "$S")" \
	--qemu-arg -device --qemu-arg vhost-user-blk-pci,chardev=rc0,num-queues=1 \
	--cmd "$GUEST_HEARTBEAT"'
		fio --name=rc --filename=/dev/vda --rw=randwrite --bs=16k --iodepth=16 \
		--ioengine=io_uring --direct=1 --runtime='"$GR_RUNTIME"' --time_based --size=8m \
		--output=/tmp/o & fp=$!; n=0
		while kill -0 $fp 2>/dev/null && [ $n -lt '"$((GR_RUNTIME + 46))"' ]; do sleep 1; n=$((n + 1)); done
		if kill -0 $fp 2>/dev/null; then '"$GUEST_HUNG_REPORT"'; kill -9 $fp; rc=8
		else wait $fp; rc=$?; grep -q "err= 0" /tmp/o || rc=9; fi
		echo "fio-rc=$rc"' \
	>"$T/guest.out" 2>"$T/guest.err" &
GP=$!
# let the guest boot and write for a while, then kill femud in the middle
for _ in $(seq 1 200); do
	grep -q "started, size" "$FEMUD_LOG" && grep -q "event_idx 1" "$FEMUD_LOG" && break
	sleep 0.1
done
sleep 5
for k in $(seq 1 "$GR_KILLS"); do
	[ "$k" = 1 ] || sleep "$((RANDOM % 5 + 2)).$((RANDOM % 10))"
	kill -KILL "$FEMUD_PID"
	wait "$FEMUD_PID" 2>/dev/null
	FEMUD_PID=
	cp "$FEMUD_LOG" "$T/first.log"
	sleep 1
	start_femud "$DEV"
	grep -q "stale socket replaced" "$FEMUD_LOG" || fail "stale socket not replaced"
	[ "$GR_KILLS" = 1 ] && break
	for _ in $(seq 1 100); do grep -q "queue 0: started" "$FEMUD_LOG" && break; sleep 0.1; done
	echo "kill $k: $(grep -o 'replaying [0-9]* in-flight' "$FEMUD_LOG" || echo 'nothing in flight')"
done
first_log() { echo "--- the killed femud's log (tail)"; tail -12 "$T/first.log"; }
wait $GP || fail "guest failed (status $?): $(tail -5 "$T/guest.err"; cat "$T/guest.out"; first_log)"
grep -q "fio-rc=0" "$T/guest.out" || fail "fio did not survive the reconnect: $(cat "$T/guest.out"; first_log)"
grep -q "queue 0: started" "$FEMUD_LOG" || fail "the second femud never started the queue"
echo "ok: fio survived a SIGKILL + restart of femud ($(grep -o 'replaying [0-9]* in-flight' "$FEMUD_LOG" || echo 'nothing in flight at the kill'))"
stop_femud
no_broken_queues
echo "femud counters after restart: requests $(qstat "$S" 0 requests), resubmitted $(qstat "$S" 0 resubmitted)"
[ "$(qstat "$S" 0 requests)" -gt 0 ] || fail "no request served after the reconnect"
echo PASS
