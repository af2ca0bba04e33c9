#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_persist.sh - data written by a guest outlives a SIGKILL of femud:
# a BlackBox SSD with its data and FTL state on a mem_path (tmpfs).  The
# guest writes 4 MiB of random data (made here, its sha256 noted) to
# /dev/vda with O_DIRECT and fsync and says so on its console; femud is
# then SIGKILLed at once, before the guest starts reading, and started again
# on the same mem_path; QEMU reconnects and the guest's O_DIRECT read of
# those 4 MiB, held while femud was down, is served by the new femud: its
# sha256 must be the one noted.  Negative control (by hand):
# GP_RESTART_KEYS=,format=1 makes the restart reformat the medium, and this
# test must then FAIL (the read returns zeros).
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S=$T/gp.sock
M=$(mktemp -u /dev/shm/femud-guest-persist.XXXXXX)
trap 'rm -f "$M"; cleanup' EXIT
DEV="path=$S,queues=1,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=32,pgs_per_blk=64,op_pcent=25,mem_path=$M"
head -c $((4 << 20)) /dev/urandom >"$T/pat"
SUM=$(sha256sum "$T/pat" | cut -d' ' -f1)
start_femud "$DEV"
guest -v --file "$T/pat:/job/pat" \
	--qemu-arg -chardev --qemu-arg "$(reconnect_chardev rc0 "$S")" \
	--qemu-arg -device --qemu-arg vhost-user-blk-pci,chardev=rc0,num-queues=1 \
	--cmd 'dd if=/job/pat of=/dev/vda bs=1M oflag=direct conv=fsync 2>/tmp/e; wrc=$?;
		echo WRITTEN-$wrc >/dev/console; sleep 5; echo "READ-$((40 + 2))" >/dev/console;
		echo "read-sum=$(dd if=/dev/vda bs=1M count=4 iflag=direct 2>/dev/null | sha256sum | cut -d" " -f1)"' \
	>"$T/guest.out" 2>"$T/guest.err" &
GP=$!
# guest-run -v streams the guest's console to its stderr as it goes: kill
# femud as soon as the write pass is done
for _ in $(seq 1 3000); do
	grep -q "WRITTEN-[0-9]" "$T/guest.err" 2>/dev/null && break
	kill -0 $GP 2>/dev/null || break
	sleep 0.1
done
grep -q "WRITTEN-0" "$T/guest.err" || fail "the guest's write pass failed or never ended: $(tail -5 "$T/guest.err")"
kill -KILL "$FEMUD_PID"
wait "$FEMUD_PID" 2>/dev/null
FEMUD_PID=
grep -q "READ-42" "$T/guest.err" && fail "the guest read before femud was killed (host too slow): the test proves nothing"
cp "$FEMUD_LOG" "$T/first.log"
sleep 1
start_femud "$DEV${GP_RESTART_KEYS:-}"
grep -q "reused" "$FEMUD_LOG" || [ -n "${GP_RESTART_KEYS:-}" ] || fail "the medium was not reused"
wait $GP || fail "guest failed (status $?): $(tail -5 "$T/guest.err")"
got=$(sed -n 's/^read-sum=//p' "$T/guest.out")
[ "$got" = "$SUM" ] ||
	fail "4 MiB written before the SIGKILL read back differently after the restart: sha256 $got, written $SUM"
echo "ok: 4 MiB written by the guest (sha256 $SUM) read back after a SIGKILL + restart of femud"
stop_femud
[ "$(qstat "$S" 0 requests)" -gt 0 ] || fail "the restarted femud served no request (the read came from elsewhere)"
echo PASS
