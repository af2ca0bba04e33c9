#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# harness_selftest.sh - the guest harness itself (guest-image, guest-run)
# against femud: one guest on two disks (2 queues, 2 vCPUs) checks the exit
# status passthrough, stdout capture with stderr and kernel messages kept
# apart, --file, -e, both disks (sizes, data written to vdb read back on the
# host side by a second guest) and the queue count; fio mode returns JSON;
# a guest that outlives -t gives 124; a refused and a missing socket give
# 125 without a guest.
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S1=$T/a.sock
S2=$T/b.sock
start_femud "path=$S1,devsz_mb=64,queues=2" "path=$S2,devsz_mb=32,queues=2"

head -c 300000 /dev/urandom >"$T/blob"
SUM=$(sha256sum "$T/blob" | cut -d' ' -f1)
VAL="two words, 'quotes' and \$dollar"
cat >"$T/check.sh" <<'EOS'
echo "<3>femud-selftest kernel message" >/dev/kmsg
echo "to-stderr" >&2
echo "sum=$(sha256sum /job/data/blob | cut -d' ' -f1)"
echo "env=$SELFTEST_VAL"
echo "vda=$(blockdev --getsize64 /dev/vda) vdb=$(blockdev --getsize64 /dev/vdb)"
echo "vda-queues=$(ls /sys/block/vda/mq | wc -l) cpus=$(grep -c ^processor /proc/cpuinfo)"
dd if=/job/data/blob of=/dev/vdb bs=4k count=64 seek=100 oflag=direct conv=fsync 2>/dev/null || exit 21
exit 7
EOS
guest -s "$S1" -s "$S2" -q 2 -c 2 -e "SELFTEST_VAL=$VAL" --file "$T/blob:/job/data/blob" \
	--file "$T/check.sh:/job/check.sh" --cmd 'sh /job/check.sh' >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 7 ] || fail "exit status $rc, wanted 7: $(cat "$T/out" "$T/err")"
echo "ok: the guest command's exit status (7) came back"
want="sum=$SUM
env=$VAL
vda=67108864 vdb=33554432
vda-queues=2 cpus=2"
[ "$(cat "$T/out")" = "$want" ] || fail "stdout was:
$(cat "$T/out")
wanted:
$want"
echo "ok: stdout exact: --file ($SUM), -e with spaces and quotes, two disks, 2 queues on 2 vCPUs"
grep -qx to-stderr "$T/err" || fail "the guest's stderr did not reach stderr: $(cat "$T/err")"
grep -q femud-selftest "$T/out" "$T/err" && fail "a kernel message leaked into stdout or stderr"
echo "ok: stderr kept apart, kernel messages stay on the console"

# fio mode: JSON on -o FILE; the 256 KiB written to vdb above read back by
# new guests that have only that disk (their vda)
guest -s "$S2" -o "$T/fio.json" -- --name=rd --filename=/dev/vda --rw=read --bs=4k \
	--offset=409600 --size=256k --direct=1 --ioengine=psync >"$T/fio.out" || fail "fio mode: status $?"
[ ! -s "$T/fio.out" ] || fail "fio mode with -o printed on stdout: $(cat "$T/fio.out")"
kb=$(jq '.jobs[0].read.io_kbytes' "$T/fio.json") || fail "fio output is not JSON: $(head -c 500 "$T/fio.json")"
[ "$kb" = 256 ] || fail "fio read $kb KiB, wanted 256"
guest -s "$S2" --cmd 'dd if=/dev/vda bs=4k skip=100 count=64 iflag=direct 2>/dev/null | sha256sum' >"$T/rd" ||
	fail "read-back guest failed"
head -c $((64 * 4096)) "$T/blob" | sha256sum | cut -d' ' -f1 >"$T/want"
[ "$(cut -d' ' -f1 "$T/rd")" = "$(cat "$T/want")" ] || fail "vdb did not keep what the first guest wrote"
echo "ok: fio mode gives JSON on -o; vdb data read back by a second guest"

# a guest that outlives the timeout
"$GUEST_RUN" --qemu "$GUEST_QEMU" --pin 1 -t 25 --quiet --cmd 'echo started; sleep 600' >"$T/to.out" 2>"$T/to.err"
rc=$?
[ "$rc" = 124 ] || fail "timeout gave status $rc, wanted 124: $(tail -5 "$T/to.err")"
grep -q "timeout" "$T/to.err" || fail "no timeout message: $(tail -5 "$T/to.err")"
echo "ok: -t 25 on a sleeping guest gives 124"

# a socket nobody listens on (refused) and a missing one: 125, fast
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$T/dead.sock"
[ -S "$T/dead.sock" ] || fail "could not make a dead socket"
"$GUEST_RUN" --qemu "$GUEST_QEMU" -t 60 --quiet -s "$T/dead.sock" --cmd true >/dev/null 2>"$T/ref.err"
rc=$?
[ "$rc" = 125 ] || fail "refused socket gave $rc, wanted 125: $(tail -5 "$T/ref.err")"
grep -qi "refused\|failed to connect" "$T/ref.err" || fail "no connection error shown: $(tail -5 "$T/ref.err")"
"$GUEST_RUN" --qemu "$GUEST_QEMU" -t 60 --quiet -s "$T/none.sock" --cmd true >/dev/null 2>&1
rc=$?
[ "$rc" = 125 ] || fail "missing socket gave $rc, wanted 125"
echo "ok: a refused socket and a missing one give 125"

stop_femud
no_broken_queues
[ $(($(qstat "$S2" 0 write_bytes) + $(qstat "$S2" 1 write_bytes))) -ge 262144 ] ||
	fail "femud did not count the 256 KiB written to vdb"
echo PASS
