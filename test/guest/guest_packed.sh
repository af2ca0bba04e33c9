#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_packed.sh - the guest drives femud's queues as packed rings
# (vhost-user-blk-pci packed=on; the guest must negotiate VIRTIO_F_RING_PACKED,
# bit 34, and femud must log every queue as packed):
#  1. femud in adaptive poll mode, 3 queues, one of them a poll queue
#     (virtio_blk.poll_queues=1, no call fd): fio random writes with crc32c
#     verify on both interrupt queues with idle gaps between jobs, then
#     io_uring hipri writes with verify on the poll queue; femud's poller
#     slept and was woken by kicks, and no call went to the poll queue.
#  2. reconnect: a BlackBox device (deferred completions, so requests are in
#     flight) with QEMU reconnecting; femud is SIGKILLed during random writes
#     and started again; the packed requests it had taken are replayed from
#     the inflight region and fio ends without an error, then verifies.
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S=/tmp/pmd-gk-$$.sock

# features as the guest's driver sees them: bit 34 is character 35
FEAT='f=$(cat /sys/block/vda/device/features)
[ "$(echo "$f" | cut -c35)" = 1 ] || { echo "packed ring not negotiated: $f"; exit 10; }'

FEMUD_OPTS=(--poll-mode adaptive --idle-us 50)
start_femud "path=$S,devsz_mb=128,queues=3"
cat >"$T/jobs.sh" <<EOS
$FEAT
EOS
cat >>"$T/jobs.sh" <<'EOS'
[ "$(cat /sys/block/vda/queue/io_poll)" = 1 ] || { echo "no poll queue"; exit 11; }
F="--filename=/dev/vda --ioengine=io_uring --direct=1 --verify=crc32c --verify_fatal=1"
run() { # NAME ARGS...: one fio job; its error status must be 0
	n=$1; shift
	fio --name="$n" $F "$@" --output=/tmp/$n.out || { echo "fio $n failed"; cat /tmp/$n.out; exit 1; }
	grep -q "err= 0" /tmp/$n.out || { echo "fio $n: error"; cat /tmp/$n.out; exit 1; }
}
Q="--size=8m --offset_increment=24m --numjobs=3 --cpus_allowed=0-2 --cpus_allowed_policy=split --group_reporting"
run a $Q --rw=randwrite --bs=4k --iodepth=16 --randseed=1
sleep 0.5
run b $Q --rw=randwrite --bsrange=512-64k --iodepth=8 --randseed=2
sleep 0.05
run c --rw=randwrite --bs=4k --iodepth=8 --hipri=1 --offset=100m --size=8m --randseed=3
echo jobs-ok
EOS
out=$(guest -s "$S" -q 3 -c 3 --dev-opts packed=on --append virtio_blk.poll_queues=1 \
	--file "$T/jobs.sh:/job/jobs.sh" --cmd 'sh /job/jobs.sh') || fail "guest jobs (status $?): $out"
echo "$out" | grep -q jobs-ok || fail "guest jobs said: $out"
n=$(grep -c "started, .* packed ring" "$FEMUD_LOG")
grep -q "started, .* split ring" "$FEMUD_LOG" && [ "$n" -lt 3 ] && fail "a queue ran as a split ring"
[ "$n" -ge 3 ] || fail "femud started $n packed queues, not 3"
echo "ok: fio verify on 2 packed interrupt queues and a packed poll queue, adaptive polling"
stop_femud
no_broken_queues
line=$(grep '^poller 0 ' "$FEMUD_LOG" | tail -1)
sleeps=$(echo "$line" | sed -n 's/.* sleeps \([0-9]*\) .*/\1/p')
kicks=$(echo "$line" | sed -n 's/.* wake_kick \([0-9]*\) .*/\1/p')
echo "femud: $line"
[ "${sleeps:-0}" -gt 0 ] || fail "the poller never slept"
[ "${kicks:-0}" -gt 0 ] || fail "no guest kick woke the poller"
for q in 0 1 2; do
	[ "$(qstat "$S" $q requests)" -gt 0 ] || fail "queue $q served nothing"
done
[ "$(qstat "$S" 2 calls)" = 0 ] || fail "calls sent on the poll queue"

FEMUD_OPTS=()
DEV="path=$S,queues=1,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=32,pgs_per_blk=64,op_pcent=25"
start_femud "$DEV"
cat >"$T/rc.sh" <<EOS
$FEAT
$GUEST_HEARTBEAT
EOS
cat >>"$T/rc.sh" <<'EOS'
fio --name=rc --filename=/dev/vda --rw=randwrite --bs=16k --iodepth=16 --ioengine=io_uring \
	--direct=1 --runtime=12 --time_based --size=8m --output=/tmp/o & fp=$!; n=0
while kill -0 $fp 2>/dev/null && [ $n -lt 60 ]; do sleep 1; n=$((n + 1)); done
if kill -0 $fp 2>/dev/null; then echo "fio hung"; cat /sys/block/vda/inflight; kill -9 $fp; exit 8; fi
wait $fp || { cat /tmp/o; exit 9; }
grep -q "err= 0" /tmp/o || { cat /tmp/o; exit 9; }
fio --name=v --filename=/dev/vda --rw=write --bs=4k --iodepth=8 --ioengine=io_uring --direct=1 \
	--size=4m --verify=crc32c --verify_fatal=1 --output=/tmp/v || { cat /tmp/v; exit 10; }
echo rc-ok
EOS
guest --qemu-arg -chardev --qemu-arg "$(reconnect_chardev rc0 "$S")" \
	--qemu-arg -device --qemu-arg vhost-user-blk-pci,chardev=rc0,num-queues=1,packed=on \
	--file "$T/rc.sh:/job/rc.sh" --cmd 'sh /job/rc.sh' >"$T/guest.out" 2>"$T/guest.err" &
GP=$!
for _ in $(seq 1 600); do
	grep -q "packed ring" "$FEMUD_LOG" && grep -q "event_idx 1" "$FEMUD_LOG" && break
	sleep 0.1
done
grep -q "packed ring" "$FEMUD_LOG" || fail "the reconnect guest's queue never started packed"
sleep 5
kill -KILL "$FEMUD_PID"
wait "$FEMUD_PID" 2>/dev/null
FEMUD_PID=
cp "$FEMUD_LOG" "$T/first.log"
sleep 1
start_femud "$DEV"
wait $GP || fail "reconnect guest failed (status $?): $(tail -5 "$T/guest.err"; cat "$T/guest.out"; tail -12 "$T/first.log")"
grep -q rc-ok "$T/guest.out" || fail "fio did not survive the reconnect: $(cat "$T/guest.out")"
grep -q "queue 0: started, .* packed ring" "$FEMUD_LOG" || fail "the restarted femud never started the packed queue"
echo "ok: fio survived a SIGKILL + restart of femud on a packed ring ($(grep -o 'replaying [0-9]* in-flight' "$FEMUD_LOG" || echo 'nothing in flight at the kill'))"
stop_femud
no_broken_queues
[ "$(qstat "$S" 0 requests)" -gt 0 ] || fail "no request served after the reconnect"
echo PASS
