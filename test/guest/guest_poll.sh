#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_poll.sh - a guest with virtio_blk.poll_queues=1 (the poll virtqueue
# has no call fd) and event_idx on: io_uring hipri random writes with
# crc32c verify complete, and the interrupt queue keeps working.
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S=/tmp/pmd-gp-$$.sock
start_femud "path=$S,devsz_mb=128,queues=2"

cat >"$T/poll.sh" <<'EOS'
[ "$(cat /sys/block/vda/queue/io_poll)" = 1 ] || { echo "no poll queue" >&2; exit 11; }
dmesg | grep -q 'default/read/poll queues' || true
fio --name=hipri --filename=/dev/vda --ioengine=io_uring --hipri=1 --direct=1 \
	--rw=randwrite --bs=4k --size=16m --iodepth=8 --randrepeat=1 --verify=crc32c \
	--verify_fatal=1 --output=/tmp/hipri.out || { cat /tmp/hipri.out >&2; exit 12; }
fio --name=irq --filename=/dev/vda --ioengine=io_uring --direct=1 --offset=64m \
	--rw=randwrite --bs=4k --size=8m --iodepth=8 --verify=crc32c --verify_fatal=1 \
	--output=/tmp/irq.out || { cat /tmp/irq.out >&2; exit 13; }
echo poll-ok
EOS
# two online vCPUs: a 6.12 guest kernel does not count QEMU's offline
# (--maxcpus) vCPUs as possible CPUs ("Allowing 1 present CPUs plus 0 hotplug
# CPUs" under QEMU 10.0), and virtio_blk uses at most nr_cpu_ids queues
out=$(guest -s "$S" -q 2 -c 2 --append virtio_blk.poll_queues=1 \
	--file "$T/poll.sh:/job/poll.sh" --cmd 'sh /job/poll.sh') || fail "poll guest (status $?): $out"
[ "$out" = poll-ok ] || fail "poll guest said: $out"
echo "ok: io_uring hipri with verify on a poll queue, event_idx on"
stop_femud
no_broken_queues
q0=$(qstat "$S" 0 requests)
q1=$(qstat "$S" 1 requests)
echo "femud counters: q0 requests $q0 calls $(qstat "$S" 0 calls), q1 requests $q1 calls $(qstat "$S" 1 calls)"
[ "${q1:-0}" -gt 0 ] || fail "the poll queue served nothing"
[ "$(qstat "$S" 1 calls)" = 0 ] || fail "calls sent on the poll queue"
echo PASS
