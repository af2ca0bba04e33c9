#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_basic.sh - one femud NoSSD device, three guests in a row:
#  1. size == devsz_mb, GET_ID serial, 512 B logical blocks, discard and
#     write-zeroes read back zeros and leave the neighbours intact, data
#     survives a device reset (driver unbind + bind);
#  2. fio random writes with crc32c verify on 2 queues (2 vCPUs, one fio
#     job per CPU), block sizes 512 B .. 256 KiB;
#  3. a fresh guest verifies the same data again (femud kept running).
# Then femud stops on SIGINT with status 0, both queues served requests, no
# queue broken.  Usage: guest_basic.sh PATH-TO-STATIC-BLKZERO
. "$(dirname "$0")/lib.sh"
skip_unless_ready
BLKZERO=${BLKZERO:-${1:?usage: guest_basic.sh PATH-TO-STATIC-BLKZERO}}
S=/tmp/pmd-gb-$$.sock
SERIAL=FEMUD-PMD-SERIAL-01
start_femud "path=$S,devsz_mb=256,queues=2,serial=$SERIAL"

cat >"$T/checks.sh" <<'EOS'
set -e
sz=$(blockdev --getsize64 /dev/vda)
[ "$sz" = 268435456 ] || { echo "size $sz" >&2; exit 11; }
ser=$(cat /sys/block/vda/serial)
[ "$ser" = "$SERIAL" ] || { echo "serial '$ser'" >&2; exit 12; }
lbs=$(cat /sys/block/vda/queue/logical_block_size)
[ "$lbs" = 512 ] || { echo "logical_block_size $lbs" >&2; exit 13; }
dd if=/dev/zero of=/tmp/z bs=512k count=1 2>/dev/null
dd if=/dev/urandom of=/tmp/p bs=512k count=4 2>/dev/null
# region R = [8 MiB, 10 MiB): pattern; discard its second 512 KiB,
# write-zeroes its fourth; the rest must keep the pattern.
dd if=/tmp/p of=/dev/vda bs=512k seek=16 oflag=direct conv=fsync 2>/dev/null
dd if=/dev/vda of=/tmp/r bs=512k skip=16 count=4 iflag=direct 2>/dev/null
cmp /tmp/p /tmp/r || { echo "pattern did not read back" >&2; exit 14; }
blkdiscard -o $((8 * 1048576 + 524288)) -l 524288 /dev/vda
/job/blkzero /dev/vda $((9 * 1048576 + 524288)) 524288
for i in 0 1 2 3; do
	dd if=/dev/vda of=/tmp/c$i bs=512k skip=$((16 + i)) count=1 iflag=direct 2>/dev/null
	dd if=/tmp/p of=/tmp/e$i bs=512k skip=$i count=1 2>/dev/null
done
cmp /tmp/c0 /tmp/e0 || { echo "discard hit its neighbour" >&2; exit 15; }
cmp /tmp/c1 /tmp/z || { echo "discarded range not zero" >&2; exit 16; }
cmp /tmp/c2 /tmp/e2 || { echo "write-zeroes hit its neighbour" >&2; exit 17; }
cmp /tmp/c3 /tmp/z || { echo "write-zeroes range not zero" >&2; exit 18; }
# device stop/start without a reboot: unbind and rebind the virtio driver
# (the guest resets the device; femud sees GET_VRING_BASE, then a restart)
vdev=$(basename "$(readlink /sys/block/vda/device)")
echo "$vdev" > /sys/bus/virtio/drivers/virtio_blk/unbind
echo "$vdev" > /sys/bus/virtio/drivers/virtio_blk/bind
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 0.2; done
dd if=/dev/vda of=/tmp/c0b bs=512k skip=16 count=1 iflag=direct 2>/dev/null
cmp /tmp/c0b /tmp/e0 || { echo "data changed across a device reset" >&2; exit 19; }
echo checks-ok
EOS
out=$(guest -s "$S" -e SERIAL="$SERIAL" --file "$BLKZERO:/job/blkzero" \
	--file "$T/checks.sh:/job/checks.sh" --cmd 'sh /job/checks.sh') ||
	fail "device checks (status $?): $out"
[ "$out" = checks-ok ] || fail "device checks said: $out"
echo "ok: size, serial, logical block size, discard, write-zeroes"

FIO=(--name=verify --filename=/dev/vda --ioengine=io_uring --direct=1 --rw=randwrite
	--bsrange=512-256k --size=24m --offset_increment=64m --numjobs=2 --iodepth=8
	--cpus_allowed=0-1 --cpus_allowed_policy=split --randrepeat=1 --verify=crc32c
	--verify_fatal=1 --group_reporting)
guest -s "$S" -q 2 -c 2 -o "$T/w.json" -- "${FIO[@]}" --verify_only=0 ||
	fail "fio write+verify failed"
echo "ok: fio write + crc32c verify, 2 queues, bs 512..256k"
guest -s "$S" -q 2 -c 2 -o "$T/v.json" -- "${FIO[@]}" --verify_only=1 ||
	fail "fio verify in a fresh guest failed"
echo "ok: fresh guest verified the data again"

stop_femud
no_broken_queues
q0=$(qstat "$S" 0 requests)
q1=$(qstat "$S" 1 requests)
echo "femud counters: q0 requests $q0, q1 requests $q1"
[ "${q0:-0}" -gt 0 ] || fail "queue 0 served nothing"
[ "${q1:-0}" -gt 0 ] || fail "queue 1 served nothing"
echo PASS
