#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_adaptive.sh - femud in adaptive poll mode (idle threshold 50 us)
# under a real guest driver: fio random writes with crc32c verify on 2
# queues, one job after another with idle gaps between them (1 s, 0.2 s,
# 20 ms), then a verify-only pass after another gap.  Every job finishes
# without an I/O or verify error, and femud's counters show that its poller
# slept and was woken by the guest's kicks.
. "$(dirname "$0")/lib.sh"
skip_unless_ready
S=/tmp/pmd-ga-$$.sock
FEMUD_OPTS=(--poll-mode adaptive --idle-us 50)
start_femud "path=$S,devsz_mb=128,queues=2"
grep -q "poll-mode adaptive" "$FEMUD_LOG" || fail "femud did not start in adaptive mode"

cat >"$T/jobs.sh" <<'EOS'
F="--filename=/dev/vda --ioengine=io_uring --direct=1 --verify=crc32c --verify_fatal=1
   --size=16m --offset_increment=64m --numjobs=2 --cpus_allowed=0-1
   --cpus_allowed_policy=split --group_reporting"
run() { # NAME ARGS...: one fio job; its error status must be 0
	n=$1; shift
	fio --name="$n" $F "$@" --output=/tmp/$n.out || { echo "fio $n failed"; cat /tmp/$n.out; exit 1; }
	grep -q "err= 0" /tmp/$n.out || { echo "fio $n: error"; cat /tmp/$n.out; exit 1; }
}
sleep 1
run a --rw=randwrite --bs=4k --iodepth=4 --randseed=1
sleep 1
run b --rw=randwrite --bsrange=512-64k --iodepth=8 --randseed=2
sleep 0.2
run c --rw=randwrite --bs=16k --iodepth=1 --randseed=3
sleep 0.02
run d --rw=randwrite --bs=4k --iodepth=16 --randseed=4
sleep 1
run d --rw=randwrite --bs=4k --iodepth=16 --randseed=4 --verify_only=1
echo jobs-ok
EOS
out=$(guest -s "$S" -q 2 -c 2 --file "$T/jobs.sh:/job/jobs.sh" --cmd 'sh /job/jobs.sh') ||
	fail "guest jobs (status $?): $out"
echo "$out" | grep -q jobs-ok || fail "guest jobs said: $out"
echo "ok: fio write+verify jobs with idle gaps, and a verify-only pass"

stop_femud
no_broken_queues
line=$(grep '^poller 0 ' "$FEMUD_LOG" | tail -1)
echo "femud: $line"
sleeps=$(echo "$line" | sed -n 's/.* sleeps \([0-9]*\) .*/\1/p')
kicks=$(echo "$line" | sed -n 's/.* wake_kick \([0-9]*\) .*/\1/p')
[ "${sleeps:-0}" -gt 0 ] || fail "the poller never slept"
[ "${kicks:-0}" -gt 0 ] || fail "no guest kick woke the poller"
[ "$(qstat "$S" 0 requests)" -gt 0 ] && [ "$(qstat "$S" 1 requests)" -gt 0 ] ||
	fail "a queue served nothing"
echo PASS
