#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_migrate.sh - live migration of a running guest between QEMUs on one
# femud.  The guest has two disks, vda a NoSSD and vdb a small BlackBox SSD
# (its garbage collection runs: every round rewrites the whole device), and
# runs rounds of O_DIRECT fio on both: read-verify of what the previous round
# wrote (on whichever QEMU wrote it), then write + read-verify of the whole
# test area with a new seed.  Meanwhile a reader read-verifies the other half
# of vda over and over, and a plain fio reads it (no verify) for the whole
# run: reads are in flight at every switch-over.  While it runs, the host
# migrates it (QMP 'migrate', single-threaded TCG) from the source to a
# destination QEMU started with -incoming on the same femud sockets, quits the
# source, and goes on the same way GM_MIGRATIONS times (source -> dest -> new
# dest ...); after each migration a new round must pass on the destination.
# Odd migrations start the destination paused (-S, as libvirt does) and compare
# the guest's RAM on both sides, byte for byte, before it runs: a page that
# reached the destination stale (its last write, by the guest or by a
# backend, never sent again) differs there even when no verify reads it.
# The plain reader's buffers are such pages: only femud writes them, so with
# femud's dirty-log marks disabled the first migration fails here (split and
# packed, QEMU 7.2 and 10.0), while fio verify alone passed without them.
# Then a migration that fails half-way (the destination SIGKILLed while RAM
# is being sent) must leave the source running, its rounds still passing.
# The guest then stops on a word from the host and reports every round
# verified.
# Prints each migration's total time and downtime (QEMU's query-migrate).
#
#   guest_migrate.sh [--migrations N] [--backend femud|qsd] [--packed]
#                    [--no-failed] [--femud-kill] [--compare-ram]
#
# --packed: the disks are packed rings (vhost-user-blk-pci packed=on), the
# NoSSD alone; every destination's queues must start packed at the position
# the source stopped at (the vring base, wrap counter in bit 15), not at the
# position of the new inflight region the destination QEMU brings.
# --no-failed: no migration that fails half-way.
# --compare-ram: every migration compares the RAM, not only odd ones.
# --femud-kill: both media on mem_path files, QEMUs reconnecting; one more
# migration during which femud is SIGKILLed (once some RAM was sent) and
# started again on the same sockets and media: the migration completes or
# fails with the source running, and the guest's rounds go on verified.  A
# destination whose queues do not start again gets what a user would do:
# QMP stop + cont, and when that does not start them either (QEMU 7.2, whose
# destination loses its reconnect when femud dies before the switch-over)
# a migration to a fresh QEMU, which connects anew; each step is printed.
# With --packed the destination's queue must start where the killed femud
# left the ring, a position QEMU never learned (the source lost its backend
# before the switch-over and migrates the base it last set): the restarted
# femud takes it from the inflight file the killed one left in /dev/shm, or,
# where the source reconnected and started its queue again from that file
# (QEMU restarts a started device on reconnect, its guest stopped or not;
# here at times), from that file as the source brought it back.
# GM_KEEP=DIR keeps the logs.
# --backend qsd runs the same migrations against qemu-storage-daemon (two
# raw images, two exports of each: QEMUs alternate between them) to compare
# downtimes; it skips the BlackBox and the femud checks.  GM_MIGRATIONS=10
# for a long run.
. "$(dirname "$0")/lib.sh"
GM_MIGRATIONS=${GM_MIGRATIONS:-2}
BACKEND=femud
GM_PACKED=${GM_PACKED:-}
GM_FAILED=1
GM_FEMUD_KILL=${GM_FEMUD_KILL:-}
GM_COMPARE_RAM=${GM_COMPARE_RAM:-}
GM_RAM_MB=512 # each guest's RAM (-m), all of it compared by compare_ram
while [ $# -gt 0 ]; do
	case $1 in
	--migrations) GM_MIGRATIONS=$2; shift ;;
	--backend) BACKEND=$2; shift ;;
	--packed) GM_PACKED=1 ;;
	--no-failed) GM_FAILED= ;;
	--femud-kill) GM_FEMUD_KILL=1 ;;
	--compare-ram) GM_COMPARE_RAM=1 ;;
	*) fail "unknown option $1" ;;
	esac
	shift
done
skip_unless_ready
GM_ROUND_WAIT=${GM_ROUND_WAIT:-150} # s for one more round to pass
QSD_PID=
QPIDS=()
# qemu_pid K: QEMU K's own process (guest-run's child), found by its QMP path
qemu_pid() { pgrep -f "^[^ ]*qemu-system[^ ]* .*-qmp unix:$T/qmp$1,"; }
gm_cleanup() {
	local p
	# guest-run ends its QEMU on TERM
	for p in "${QPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 1
	for p in "${!QPIDS[@]}"; do kill -KILL $(qemu_pid "$p") 2>/dev/null; done
	[ -n "$QSD_PID" ] && kill "$QSD_PID" 2>/dev/null
	# GM_KEEP=DIR keeps the QEMUs' output and femud's logs for a post-mortem
	[ -n "${GM_KEEP:-}" ] && mkdir -p "$GM_KEEP" && cp "$T"/err* "$T"/out* "$T"/prog* "$T"/*.log "$GM_KEEP"/ 2>/dev/null
	cleanup
	[ -n "${MEDIA:-}" ] && rm -f "$MEDIA.nossd" "$MEDIA.bb"
}
trap gm_cleanup EXIT

# ---- the backend: femud (NoSSD + BlackBox) or qemu-storage-daemon (two exports per disk)
# media on mem_path files (tmpfs) when femud is to restart with them
MEDIA=$(mktemp -u /dev/shm/femud-guest-migrate.XXXXXX)
if [ "$BACKEND" = femud ]; then
	DEVS=("path=$T/nossd.sock,queues=1,devsz_mb=16${GM_FEMUD_KILL:+,mem_path=$MEDIA.nossd}")
	[ -n "$GM_PACKED" ] ||
		DEVS+=("path=$T/bb.sock,queues=1,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25${GM_FEMUD_KILL:+,mem_path=$MEDIA.bb}")
	start_femud "${DEVS[@]}"
	if [ -n "$GM_PACKED" ]; then
		socks() { echo "$T/nossd.sock"; }
	else
		socks() { echo "$T/nossd.sock $T/bb.sock"; }
	fi
elif [ "$BACKEND" = qsd ]; then
	command -v qemu-storage-daemon >/dev/null || fail "no qemu-storage-daemon"
	truncate -s 16M "$T/d1.img"
	truncate -s 12M "$T/d2.img"
	qa=()
	for d in 1 2; do
		qa+=(--blockdev "driver=file,node-name=d$d,filename=$T/d$d.img,cache.direct=on")
		for x in a b; do
			qa+=(--export "type=vhost-user-blk,id=e$d$x,node-name=d$d,addr.type=unix,addr.path=$T/q$d$x.sock,writable=on,num-queues=1")
		done
	done
	qemu-storage-daemon "${qa[@]}" >"$T/qsd.log" 2>&1 &
	QSD_PID=$!
	for _ in $(seq 1 100); do [ -S "$T/q2b.sock" ] && break; sleep 0.1; done
	[ -S "$T/q2b.sock" ] || fail "qemu-storage-daemon did not start: $(cat "$T/qsd.log")"
	# an export serves one frontend: QEMU k uses export a or b
	socks() { if [ $(($1 % 2)) = 0 ]; then echo "$T/q1a.sock $T/q2a.sock"; else echo "$T/q1b.sock $T/q2b.sock"; fi; }
else
	fail "--backend femud or qsd, not $BACKEND"
fi

# The guest: rounds until the host writes to port org.femud.in.  Progress
# lines go to port org.femud.progress (a file per QEMU); the result to stdout.
JOB='inp=; prog=
for p in /sys/class/virtio-ports/*; do
	case $(cat $p/name) in org.femud.in) inp=/dev/${p##*/} ;; org.femud.progress) prog=/dev/${p##*/} ;; esac
done
[ -n "$inp" ] && [ -n "$prog" ] || { echo "no control ports"; exit 3; }
(cat "$inp" >/tmp/stop) &
# fio_on DEV SEED MODE [AREA]: one pass over the test area (MODE: write or verify)
fio_on() {
	extra=; [ "$3" = verify ] && extra=--verify_only
	fio --name=m --filename=/dev/$1 --rw=randwrite --bs=4k --iodepth=8 --ioengine=io_uring \
		--direct=1 --verify=crc32c --verify_fatal=1 --randseed=$2 $extra ${4:-} \
		--output=/tmp/fio-$1-$2-$3 >/dev/null 2>&1 || { echo "FIO-FAIL $1 seed $2 $3"; grep -i -m 5 "verify\|err\|bad" /tmp/fio-$1-$2-$3; return 1; }
}
# vda: rounds on its first half; its second half is written once and read-verified
# over and over until the end, so that reads (femud writing guest memory) are in
# flight at every switch-over
fio_on vda 999 write "--offset=8m --size=8m" || { echo "round 0 FAILED" >"$prog"; exit 1; }
(n=0; while [ ! -s /tmp/stop ]; do n=$((n + 1))
	fio_on vda 999 verify "--offset=8m --size=8m" >/tmp/reader.log || { echo "reader FAILED after $n passes" >"$prog"; cat /tmp/reader.log >"$prog"; exit 1; }
done; echo "reader passes=$n" >/tmp/reader.done) &
reader=$!
# plain reads of the same half, no verify, in one process for the whole run:
# no CPU writes their buffers, so on the destination those pages hold what
# femud read last only where femud marked them (compare_ram)
fio --name=p --filename=/dev/vda --rw=randread --bs=4k --iodepth=4 --ioengine=io_uring \
	--direct=1 --offset=8m --size=8m --time_based --runtime=100000 >/dev/null 2>&1 &
plain=$!
r=0; last=0
while :; do
	[ -s /tmp/stop ] && last=$((last + 1))
	[ $last -gt 1 ] && break
	r=$((r + 1))
	pids=
	for d in $disks; do
		a=; [ $d = vda ] && a="--size=8m"
		( ( [ $r = 1 ] || fio_on $d $((r - 1)) verify "$a" ) && fio_on $d $r write "$a" ) &
		pids="$pids $!"
	done
	rc=0; for p in $pids; do wait $p || rc=1; done
	if [ $rc != 0 ]; then echo "round $r FAILED" >"$prog"; echo "round $r FAILED"; exit 1; fi
	echo "round $r ok $(cut -d" " -f1 /proc/uptime)" >"$prog"
done
kill $plain
wait $reader || { echo "reader FAILED"; cat /tmp/reader.log; exit 1; }
echo "verified rounds=$r $(cat /tmp/reader.done)"'

# the guest's disks: vdb (the BlackBox) only when it has one
if [ -n "$GM_PACKED" ] && [ "$BACKEND" = femud ]; then
	JOB="disks=vda
$JOB"
else
	JOB="disks='vda vdb'
$JOB"
fi

# start_qemu K [--incoming URI]: QEMU number K in the background (guest-run;
# QMP at $T/qmpK, progress in $T/progK, stdin fifo $T/inK), pid in QPIDS[K]
start_qemu() {
	local k=$1 s a=() j=0 o=${GM_PACKED:+,packed=on}
	shift
	for s in $(socks "$k"); do
		if [ -n "$GM_FEMUD_KILL" ]; then
			# QEMU reconnects to a restarted femud
			a+=(--qemu-arg -chardev --qemu-arg "$(reconnect_chardev gmd$j "$s")"
				--qemu-arg -device --qemu-arg "vhost-user-blk-pci,chardev=gmd$j,num-queues=1$o")
		else
			a+=(-s "$s")
		fi
		j=$((j + 1))
	done
	[ -n "$GM_PACKED" ] && [ -z "$GM_FEMUD_KILL" ] && a+=(--dev-opts packed=on)
	mkfifo "$T/in$k.in" "$T/in$k.out"
	: >"$T/prog$k"
	"$GUEST_RUN" --qemu "$GUEST_QEMU" --pin 1 -t 600 --quiet -a tcg --tcg-thread single -m "${GM_RAM_MB}M" \
		"${a[@]}" --qmp "$T/qmp$k" "$@" \
		--qemu-arg -chardev --qemu-arg "pipe,id=gmin,path=$T/in$k" \
		--qemu-arg -device --qemu-arg "virtserialport,bus=glser.0,chardev=gmin,name=org.femud.in" \
		--qemu-arg -chardev --qemu-arg "file,id=gmprog,path=$T/prog$k" \
		--qemu-arg -device --qemu-arg "virtserialport,bus=glser.0,chardev=gmprog,name=org.femud.progress" \
		--cmd "$JOB" >"$T/out$k" 2>"$T/err$k" &
	QPIDS[k]=$!
}

# qemu_ended K SECS: QEMU K's process is gone, waiting up to SECS seconds
qemu_ended() {
	local end=$((SECONDS + $2))
	while kill -0 "${QPIDS[$1]}" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
	! kill -0 "${QPIDS[$1]}" 2>/dev/null
}

# quit_qemu K WHAT: QMP quit to QEMU K, and its process gone within 60 s
# (a QEMU that hangs on the way out fails here, with femud's log, instead of
# holding the test until meson's timeout kills it without a word)
quit_qemu() {
	qmp "$T/qmp$1" quit
	qemu_ended "$1" 60 || fail "$2: QEMU $1 did not end in 60 s after quit: $(tail -5 "$T/err$1")"
	wait "${QPIDS[$1]}" 2>/dev/null
}

# rounds K: rounds reported ok by QEMU K so far
rounds() { grep -c " ok " "$T/prog$1"; }
# wait_round K N WHAT: QEMU K reports round N+1 or later (one more than N passed there)
wait_round() {
	local n end=$((SECONDS + GM_ROUND_WAIT))
	while [ "$SECONDS" -lt "$end" ]; do
		grep -q FAILED "$T/prog$1" && fail "$3: $(cat "$T/prog$1")"
		n=$(grep -c " ok " "$T/prog$1")
		[ "$n" -gt "$2" ] && return 0
		kill -0 "${QPIDS[$1]}" 2>/dev/null || fail "$3: QEMU $1 ended: $(tail -5 "$T/err$1"; cat "$T/out$1")"
		sleep 0.1
	done
	[ -n "$QSD_PID" ] && echo "qemu-storage-daemon said: $(tail -3 "$T/qsd.log")" >&2
	qemu_state "$1" >&2
	fail "$3: no round passed on QEMU $1 in $GM_ROUND_WAIT s"
}
qmp() { "$SRCDIR/test/guest/guest-qmp" "$@"; }
# xp16 QMP ADDR: the 16-bit value at guest physical address ADDR
xp16() { qmp "$1" hmp "xp /1hu $2" 2>/dev/null | awk '{print $2}'; }
# qemu_state K: what QEMU K's vCPU and virtio queues show (a stalled guest:
# halted with no timer armed, or a queue whose used index the guest missed;
# fail adds femud's queue counters)
qemu_state() {
	local q=$T/qmp$1 c p n a u devs
	echo "QEMU $1: $(qmp "$q" status 2>&1); progress: $(tail -2 "$T/prog$1" | tr '\n' ' ')"
	# where the vCPU is, a few times (one loop or not; IF in RFL), and the code there
	for c in 1 2 3 4 5; do
		qmp "$q" hmp "info registers" 2>&1 | grep "^RIP"
		sleep 0.2
	done
	qmp "$q" hmp "x /12i \$pc" 2>&1
	echo "--- info lapic"
	qmp "$q" hmp "info lapic" 2>&1 | grep -E "^(Timer|LVTT|ISR|IRR|APR|ESR)"
	devs=$(qmp "$q" hmp "info virtio" 2>&1)
	echo "--- info virtio"$'\n'"$devs"
	# each disk's queue 0 in guest memory: the avail and used indexes, and
	# used_event (where the driver wants its next interrupt: below the used
	# index while the driver waits, an interrupt it never took)
	for p in $(echo "$devs" | grep "virtio-blk" | grep -o "^/[^ ]*"); do
		read -r n a u < <(qmp "$q" hmp "info virtio-vhost-queue-status $p 0" 2>&1 |
			awk '/^ *num:/ { n = $2 } /avail_phys/ { a = $2 } /used_phys/ { u = $2 }
				END { print n, a, u }')
		[ -n "$u" ] || continue
		echo "$p (size $n): avail idx $(xp16 "$q" $((a + 2))), used idx $(xp16 "$q" $((u + 2)))," \
			"used_event $(xp16 "$q" $((a + 4 + 2 * n)))"
	done
}
# qemu_at_least MAJOR MINOR: the QEMU under test is that version or newer
qemu_at_least() {
	local v
	v=$("$GUEST_QEMU" --version | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p;q')
	set -- "$1" "$2" ${v:-0 0}
	[ "$3" -gt "$1" ] || { [ "$3" -eq "$1" ] && [ "$4" -ge "$2" ]; }
}
# compare_ram FROM TO WHAT: after a migration to a destination started with
# -S, both guests stopped: their RAM must be the same byte for byte (no
# backend writes it between the source's GET_VRING_BASE and the destination's
# start).  A page that differs is one the migration lost: written by the guest
# or by the backend after the copy QEMU sent, and not sent again.  Then the
# destination runs.
compare_ram() {
	local d bytes=$((GM_RAM_MB << 20))
	qmp "$T/qmp$2" wait-status paused 60 || fail "$3: destination $2 not paused after it"
	for d in "$1" "$2"; do
		rm -f "$T/ram$d"
		qmp "$T/qmp$d" hmp "pmemsave 0 $bytes \"$T/ram$d\"" >/dev/null
		[ "$(stat -c %s "$T/ram$d" 2>/dev/null)" = "$bytes" ] || fail "$3: no RAM dump of QEMU $d"
	done
	python3 - "$T/ram$1" "$T/ram$2" "$3" <<'PY' || fail "$3: the destination's RAM is not the source's"
import sys
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
# the legacy VGA and ROM window (0xa0000-0xfffff) is not plain RAM
pages = [p for p in range(len(a) // 4096) if not 0xA0 <= p < 0x100
         and a[p * 4096:(p + 1) * 4096] != b[p * 4096:(p + 1) * 4096]]
print(f"{sys.argv[3]}: {len(pages)} of {len(a) // 4096} pages of guest RAM differ on the destination")
for p in pages[:16]:
    o = p * 4096
    diff = [i for i in range(4096) if a[o + i] != b[o + i]]
    print(f"  page {o:#x}: {len(diff)} bytes, from offset {diff[0]:#x} to {diff[-1]:#x}")
sys.exit(1 if pages else 0)
PY
	rm -f "$T/ram$1" "$T/ram$2"
	qmp "$T/qmp$2" cont || fail "$3: cont on QEMU $2"
}
# migrate_to_new FROM TO WHAT [compare]: start QEMU TO with -incoming, migrate
# QEMU FROM to it (the migration must complete), end QEMU FROM; with compare
# the destination starts paused (-S, as libvirt starts it) and runs once its
# RAM matched the source's (compare_ram)
migrate_to_new() {
	local out s=()
	[ "${4:-}" = compare ] && s=(--qemu-arg -S)
	start_qemu "$2" --incoming "unix:$T/mig$2" "${s[@]}"
	qmp "$T/qmp$2" wait-status inmigrate 60 || fail "destination $2 did not come up"
	out=$(qmp "$T/qmp$1" migrate "unix:$T/mig$2" 300) || fail "$3: $out"
	echo "$3 ($1 -> $2): $out"
	[ "${4:-}" = compare ] && compare_ram "$1" "$2" "$3"
	quit_qemu "$1" "$3"
}
# queues_started N: within N tenths of a second every disk's queue 0 started
# on this femud without dirty logging: the destination's, after the switch-over
# (the source's queues, restarted while it migrated, log dirty pages)
queues_started() {
	for _ in $(seq 1 "$1"); do
		[ "$(grep "queue 0: started" "$FEMUD_LOG" | grep -vc "dirty logging")" -ge "${#DEVS[@]}" ] &&
			return 0
		sleep 0.1
	done
	return 1
}
# check_packed_start I: after migration I, the destination's queue started
# as a packed ring, at a position other than a new ring's (used 32768: index
# 0, wrap counter 1; the source had served rounds from there)
check_packed_start() {
	local l
	l=$(grep "queue 0: started" "$FEMUD_LOG" | tail -1)
	echo "$l" | grep -q ", packed ring," || fail "migration $1: destination queue not packed: $l"
	echo "$l" | grep -q " used 32768," && fail "migration $1: destination started at a new ring's position: $l"
	echo "destination queue: ${l#*queue 0: }"
}

start_qemu 0
wait_round 0 0 "first round on the source"
echo "source: $(tail -1 "$T/prog0")"
cur=0
for i in $(seq 1 "$GM_MIGRATIONS"); do
	nxt=$i
	# odd migrations (every one with --compare-ram) compare the RAM; even
	# ones start the destination at once, as QEMU's monitor does
	c=; { [ -n "$GM_COMPARE_RAM" ] || [ $((i % 2)) = 1 ]; } && c=compare
	migrate_to_new "$cur" "$nxt" "migration $i" $c
	[ "$BACKEND" = qsd ] || [ "$(qmp "$T/qmp$nxt" status)" = running ] || fail "destination $nxt not running"
	[ "$BACKEND" = femud ] && ! grep -q "dirty logging" "$FEMUD_LOG" && fail "no queue logged dirty pages"
	[ -n "$GM_PACKED" ] && check_packed_start "$i"
	# the destination goes on: one round more than it came with, verified there
	wait_round "$nxt" 0 "after migration $i"
	echo "destination $nxt: $(tail -1 "$T/prog$nxt")"
	cur=$nxt
done

# femud SIGKILLed while RAM is sent, and started again on the same media:
# the migration completes (the destination goes on) or fails (the source
# goes on); QEMU reconnects either way and the rounds verify what was written
if [ -n "$GM_FEMUD_KILL" ] && [ "$BACKEND" = femud ]; then
	k=$((GM_MIGRATIONS + 1))
	n=$(rounds "$cur")
	start_qemu "$k" --incoming "unix:$T/mig$k"
	qmp "$T/qmp$k" wait-status inmigrate 60 || fail "destination $k did not come up"
	qmp "$T/qmp$cur" migrate "unix:$T/mig$k" 300 "$FEMUD_PID" 30 >"$T/killmig" 2>&1
	rc=$?
	echo "femud killed during migration $k: $(cat "$T/killmig")"
	grep -q "killed after" "$T/killmig" || fail "femud was not killed during the migration"
	wait "$FEMUD_PID" 2>/dev/null
	cp "$FEMUD_LOG" "$T/femud-killed.log"
	if [ "$rc" = 0 ] && ! qemu_at_least 9 1; then
		# QEMU 7.2's stopped source starts its queues again on a new femud
		# and has them served into its own memory (docs/design.md, Limits):
		# it ends before femud comes back, as libvirt ends it
		quit_qemu "$cur" "the source before femud's restart"
	fi
	start_femud "${DEVS[@]}"
	if [ "$rc" = 0 ]; then
		# a newer source stays a while, as a management tool may leave it:
		# it reconnects to the new femud and brings its inflight file back
		# without starting its queue; the destination's packed queue must
		# still take the ring's position from that file
		if qemu_at_least 9 1; then
			[ -n "$GM_PACKED" ] && sleep 3
			quit_qemu "$cur" "the source after femud's restart"
		fi
		cur=$k
		n=0
		queues_started 100
		if ! queues_started 1; then
			echo "destination $k reconnected without starting its queues: stop + cont"
			qmp "$T/qmp$k" stop && qmp "$T/qmp$k" cont || fail "stop + cont on QEMU $k"
		fi
		if ! queues_started 100; then
			# QEMU 7.2 lost the chardev's event handler when femud died before
			# the switch-over (fixed in QEMU 9.1): a fresh QEMU takes the guest
			k2=$((k + 1))
			echo "destination $k still has no queues: migrating it to a fresh QEMU $k2"
			migrate_to_new "$k" "$k2" "migration to a fresh QEMU"
			cur=$k2
			k=$k2
		fi
	else
		qmp "$T/qmp$cur" wait-status running 30 || fail "the source did not keep running"
		kill -TERM "${QPIDS[k]}" 2>/dev/null
	fi
	wait_round "$cur" "$n" "QEMU $cur after femud's restart"
	echo "QEMU $cur after femud's restart: $(tail -1 "$T/prog$cur")"
	if [ -n "$GM_PACKED" ] && [ "$rc" = 0 ]; then
		l=$(grep "takes the ring's position" "$FEMUD_LOG" | tail -1)
		[ -n "$l" ] || fail "the destination's packed queue did not take the ring's position"
		echo "position: ${l#*: takes }"
	fi
	[ -n "$GM_PACKED" ] && [ "$rc" = 0 ] && check_packed_start "$k"
	GM_MIGRATIONS=$k
fi

# a migration that fails half-way: the destination dies while RAM is sent
bad=$((GM_MIGRATIONS + 1))
if [ -n "$GM_FAILED" ]; then
	start_qemu "$bad" --incoming "unix:$T/mig$bad"
	qmp "$T/qmp$bad" wait-status inmigrate 60 || fail "destination $bad did not come up"
	qp=$(qemu_pid "$bad")
	[ -n "$qp" ] || fail "no QEMU process for destination $bad"
	qmp "$T/qmp$cur" migrate "unix:$T/mig$bad" 120 "$qp" 60 >"$T/badmig" 2>&1
	echo "killed destination: $(cat "$T/badmig")"
	grep -q "migrate: failed" "$T/badmig" || fail "the migration did not fail with its destination killed half-way"
	qmp "$T/qmp$cur" wait-status running 30 || fail "the source did not keep running"
	n=$(rounds "$cur")
	wait_round "$cur" "$n" "source after the failed migration"
	echo "source after the failed migration: $(tail -1 "$T/prog$cur")"
fi

# stop the guest (it ends after one more round) and read its verdict
echo stop >"$T/in$cur.in"
if ! qemu_ended "$cur" "$GM_ROUND_WAIT"; then
	qemu_state "$cur" >&2
	fail "the guest on QEMU $cur did not end in $GM_ROUND_WAIT s after the word to stop: $(cat "$T/prog$cur"; tail -5 "$T/err$cur")"
fi
wait "${QPIDS[cur]}"
rc=$?
cat "$T/out$cur"
[ "$rc" = 0 ] || fail "guest failed on QEMU $cur (status $rc): $(tail -5 "$T/err$cur"; cat "$T/prog$cur")"
grep -q "verified rounds=" "$T/out$cur" || fail "no verdict from the guest"
if [ "$BACKEND" = femud ]; then
	stop_femud
	no_broken_queues
	grep -E "started, size" "$FEMUD_LOG" | tail -8
fi
echo PASS
