#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_variants.sh - two devices on one femud, one guest sees both:
#  vda: readonly=1 -> the guest sees a read-only disk, reads work, writes fail;
#  vdb: secsz=4096 -> logical_block_size 4096, 4 KiB writes read back;
#  both offer 8 queues (num-queues=8) to a 1-vCPU guest that uses one.
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S1=/tmp/pmd-gv1-$$.sock
S2=/tmp/pmd-gv2-$$.sock
# default queues (8) with a 1-vCPU guest: it uses one of them, the others
# are never started (rte_vhost's new_device never fires)
start_femud "path=$S1,devsz_mb=64,readonly=1" "path=$S2,devsz_mb=64,secsz=4096"

cat >"$T/checks.sh" <<'EOS'
[ "$(cat /sys/block/vda/ro)" = 1 ] || { echo "vda not read-only" >&2; exit 11; }
dd if=/dev/vda of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null ||
	{ echo "read of the readonly disk failed" >&2; exit 12; }
if dd if=/dev/zero of=/dev/vda bs=4k count=1 oflag=direct 2>/dev/null; then
	echo "write to the readonly disk succeeded" >&2; exit 13
fi
[ "$(cat /sys/block/vdb/queue/logical_block_size)" = 4096 ] ||
	{ echo "vdb logical_block_size $(cat /sys/block/vdb/queue/logical_block_size)" >&2; exit 14; }
[ "$(blockdev --getsize64 /dev/vdb)" = 67108864 ] || { echo "vdb size" >&2; exit 15; }
dd if=/dev/urandom of=/tmp/p bs=4k count=64 2>/dev/null
dd if=/tmp/p of=/dev/vdb bs=4k seek=7 oflag=direct 2>/dev/null || exit 17
dd if=/dev/vdb of=/tmp/r bs=4k skip=7 count=64 iflag=direct 2>/dev/null || exit 18
cmp /tmp/p /tmp/r || { echo "vdb data mismatch" >&2; exit 19; }
echo checks-ok
EOS
out=$(guest -s "$S1" -s "$S2" -q 8 --file "$T/checks.sh:/job/checks.sh" --cmd 'sh /job/checks.sh') ||
	fail "checks (status $?): $out"
[ "$out" = checks-ok ] || fail "checks said: $out"
echo "ok: readonly disk refuses writes, secsz=4096 seen as 4096 B blocks"
stop_femud
no_broken_queues
[ "$(qstat "$S2" 0 write_bytes)" -ge 262144 ] || fail "vdb writes not counted"
[ "$(qstat "$S1" 0 write_bytes)" = 0 ] || fail "bytes written to the readonly disk"
echo PASS
