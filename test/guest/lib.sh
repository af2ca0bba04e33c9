#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - shared helpers of the femud guest tests: start femud with its
# poller on CPU 0 (one lcore: the main lcore polls), run guests pinned to
# CPU 1 through test/guest/guest-run, stop femud and check its exit status
# and counters.  Sourced by test/guest/*.sh.
set -u

SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILDDIR=${BUILDDIR:-$SRCDIR/build}
FEMUD=${FEMUD:-$BUILDDIR/daemon/femud}
GUEST_RUN=$SRCDIR/test/guest/guest-run
T=$(mktemp -d /tmp/pmd-guest.XXXXXX)
FEMUD_PID=
FEMUD_LOG=$T/femud.log
GUEST_TIMEOUT=${GUEST_TIMEOUT:-150}
# The QEMU guest-run starts: Debian 12's 7.2 unless the caller names one
# (test/guest/qemu10.sh: QEMU 10.0 from bookworm-backports).  The guest
# kernel: guest-image's pinned default (the newest 6.1) unless
# FEMUD_GUEST_KVER names one (qemu10.sh: 6.12).
GUEST_QEMU=${FEMUD_GUEST_QEMU:-qemu-system-x86_64}

cleanup() {
	if [ -n "$FEMUD_PID" ] && kill -0 "$FEMUD_PID" 2>/dev/null; then
		kill -INT "$FEMUD_PID" 2>/dev/null
		sleep 2
		kill -KILL "$FEMUD_PID" 2>/dev/null
	fi
	[ -n "${KEEP_LOG:-}" ] && cp "$FEMUD_LOG" "$KEEP_LOG"
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	# a femud still running prints its queues' counters first (SIGUSR1): what a hang looked like
	if [ -n "${FEMUD_PID:-}" ] && kill -USR1 "$FEMUD_PID" 2>/dev/null; then sleep 0.5; fi
	[ -f "$FEMUD_LOG" ] && { echo "--- femud log (tail)" >&2; tail -30 "$FEMUD_LOG" >&2; }
	exit 1
}

# skip_unless_ready: femud, QEMU and the guest image are there, or the test
# FAILS: a guest test that cannot run is not a pass (the name is historical)
skip_unless_ready() {
	local img
	[ -x "$FEMUD" ] || fail "no femud at $FEMUD (build it first)"
	command -v "$GUEST_QEMU" >/dev/null || fail "no QEMU at $GUEST_QEMU (apt-get install qemu-system-x86)"
	img=$("$SRCDIR/test/guest/guest-image" ${FEMUD_GUEST_KVER:+--kver "$FEMUD_GUEST_KVER"} 2>&1) ||
		fail "no guest image: $img"
}

# start_femud DEV-SPEC... : one --dev per argument, poller on CPU 0; extra
# femud options in the array FEMUD_OPTS (e.g. --poll-mode adaptive)
FEMUD_OPTS=()
start_femud() {
	local args=() d
	for d in "$@"; do args+=(--dev "$d"); done
	# empty the log before femud starts: the background job's own '>' may
	# truncate it only after the first grep below, which would then find the
	# previous femud's "ready" (a restart after a SIGKILL)
	: >"$FEMUD_LOG"
	taskset -c 0 "$FEMUD" --rpc none --lcores 0 "${FEMUD_OPTS[@]}" "${args[@]}" >"$FEMUD_LOG" 2>&1 &
	FEMUD_PID=$!
	for _ in $(seq 1 300); do
		grep -q "femud: ready" "$FEMUD_LOG" 2>/dev/null && return 0
		kill -0 "$FEMUD_PID" 2>/dev/null || fail "femud exited at start"
		sleep 0.1
	done
	fail "femud not ready after 30 s"
}

# stop_femud: SIGINT, expect exit status 0
stop_femud() {
	local rc
	kill -INT "$FEMUD_PID"
	wait "$FEMUD_PID"
	rc=$?
	FEMUD_PID=
	[ "$rc" = 0 ] || fail "femud exited with status $rc"
}

# guest ARGS... : guest-run with the guest on CPU 1.  QEMU 10.0.2's
# multi-threaded TCG can abort on its own assertion while the guest boots
# ("iotlb_to_section: Assertion `section_index < d->map.sections_nb'", before
# any request): that is the peer's bug, not femud's, so a run that ends that
# way is repeated once, and says so.  stderr goes
# through tee as it comes (guest_persist follows the console as it goes).
guest() {
	local err rc try
	err=$(mktemp)
	for try in 1 2; do
		{
			"$GUEST_RUN" --qemu "$GUEST_QEMU" --pin 1 -t "$GUEST_TIMEOUT" --quiet "$@" 2>&1 1>&3 3>&- |
				tee "$err" >&2
			rc=${PIPESTATUS[0]}
		} 3>&1
		[ "$rc" != 0 ] && [ "$try" = 1 ] && grep -q "iotlb_to_section: Assertion" "$err" ||
			break
		echo "note: QEMU aborted in its own TCG code (above), not femud: running the guest once more" >&2
	done
	rm -f "$err"
	return "$rc"
}

# Guest shell commands that say where the driver's requests stand when its
# I/O stopped (a fio still running long after its runtime): the block layer's
# in-flight count and busy tags (debugfs), the virtio interrupts and the last
# kernel messages.  Against femud's avail_next / used_next / pending (its
# SIGUSR1 counters, printed by fail) this tells a request femud never saw
# from one it never completed, or a completion the driver was not told of.
GUEST_HUNG_REPORT='echo "I/O stopped: fio still running after ${n}s"
	echo "vda inflight (reads writes): $(cat /sys/block/vda/inflight)"
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for f in /sys/kernel/debug/block/vda/hctx*/busy /sys/kernel/debug/block/vda/hctx*/dispatch; do
		echo "$f:"; cat "$f"; done
	grep -i virtio /proc/interrupts; dmesg | tail -n 15'

# A guest shell command that puts a line on the console every 2 s (kernel
# level 3, shown under 'quiet'): when a run times out, the console's tail
# (guest-run prints it) says whether and when the guest itself stopped.
GUEST_HEARTBEAT='(while :; do echo "<3>femu-alive $(cut -d" " -f1 /proc/uptime)" >/dev/kmsg; sleep 2; done) &'

# reconnect_chardev ID PATH : -chardev options of a vhost-user socket that
# QEMU reconnects to after a backend restart (1 s).  QEMU 9.2 deprecated
# 'reconnect' (seconds) for 'reconnect-ms'; 7.2 knows only the former.
reconnect_chardev() {
	local v
	v=$("$GUEST_QEMU" --version | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -1)
	set -- "$1" "$2" $v
	if [ "${3:-0}" -gt 9 ] || { [ "${3:-0}" = 9 ] && [ "${4:-0}" -ge 2 ]; }; then
		echo "socket,id=$1,path=$2,reconnect-ms=1000"
	else
		echo "socket,id=$1,path=$2,reconnect=1"
	fi
}

# qstat PATH QUEUE FIELD : a counter from femud's exit statistics
qstat() {
	awk -v dev="$1" -v q="q$2" -v f="$3" '
		$1 == "device" { cur = $2 }
		cur == dev && $1 == q { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }
	' "$FEMUD_LOG"
}

# no_broken_queues: no queue was stopped for a bad chain, no errors logged
no_broken_queues() {
	grep -q "queue stopped" "$FEMUD_LOG" && fail "a queue was marked broken"
	awk '$1 ~ /^q[0-9]+$/ { for (i = 2; i < NF; i += 2) if ($i == "broken" && $(i+1) != 0) exit 1 }' \
		"$FEMUD_LOG" || fail "broken counter not zero"
}
