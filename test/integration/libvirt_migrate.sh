#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libvirt_migrate.sh - virsh migrate --live of a domain on femud disks, the
# way a libvirt user moves a guest to new QEMU processes on the same host.
# libvirt refuses a destination with its own host UUID, so the destination
# is a second libvirtd with another UUID and its own state directories
# (libvirt-lib.sh); both reach femud's sockets.  The domain (libvirt-xml's
# disks: a NoSSD vda with 2 queues, a BlackBox vdb whose garbage collection
# runs under the guest's rewrites) has the guest check both disks over and
# over (4 MiB of random data written with O_DIRECT, read back, compared)
# while it is migrated to the second libvirtd and back, as many round trips
# as asked.  Every check passes,
# checks go on after each migration, femud logs the dirty pages of both
# disks' queues during each migration and the destination's queues start.
# Root only.  Args: femuctl path [round trips, default 1].  Env: FEMUD,
# SRCDIR; FEMUD_GUEST_QEMU (test/guest/qemu10.sh sets it) is the domain's
# <emulator>.
set -u
CTL=${1:?usage: libvirt_migrate.sh FEMUCTL [ROUND-TRIPS]}
TRIPS=${2:-1}
# shellcheck source=libvirt-lib.sh
. "${SRCDIR:?SRCDIR not set}/test/integration/libvirt-lib.sh"
lv_need unshare

T=$(mktemp -d /tmp/femud-lvmig.XXXXXX)
chmod 755 "$T" # QEMU (libvirt-qemu) reaches the sockets and channel files in here
DOM=femud-mig-$$
A=qemu:///system B=
FPID=
virsh_a() { virsh -q -c "$A" "$@"; }
virsh_b() { virsh -q -c "$B" "$@"; }
cleanup() {
	virsh_a destroy "$DOM" >/dev/null 2>&1
	[ -n "$B" ] && virsh_b destroy "$DOM" >/dev/null 2>&1
	lv_cleanup
}
trap cleanup EXIT

lv_system_libvirtd
lv_second_libvirtd "$T/b" && B=$LV_URI && ok "a second libvirtd with its own host UUID" ||
	{ ko "second libvirtd: $(cat "$T/b/start.log")"; finish; }
ua=$(virsh_a capabilities | sed -n 's:.*<uuid>\(.*\)</uuid>.*:\1:p' | head -1)
ub=$(virsh_b capabilities | sed -n 's:.*<uuid>\(.*\)</uuid>.*:\1:p' | head -1)
[ -n "$ua" ] && [ -n "$ub" ] && [ "$ua" != "$ub" ] || ko "host UUIDs '$ua' and '$ub'"

own=sock_owner=libvirt-qemu,sock_mode=0660
lv_femud_start "$T/femud.log" --dev "path=$T/vda.sock,devsz_mb=64,queues=2,$own" \
	--dev "path=$T/vdb.sock,queues=1,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25,$own" ||
	{ ko "femud did not start"; finish; }
for d in vda vdb; do
	"$CTL" -s "$T/rpc.sock" libvirt-xml "$T/$d.sock" $d >"$T/$d.xml" || { ko "libvirt-xml $d"; finish; }
done
pin=$(sed -n "s/.*<emulatorpin cpuset='\([^']*\)'.*/\1/p" "$T/vda.xml")
[ -n "$pin" ] || { ko "no emulatorpin line: $(cat "$T/vda.xml")"; finish; }

img=$(gl_image 2>"$T/image.err") || { ko "guest image: $(tail -5 "$T/image.err")"; finish; }
cat >"$T/run.sh" <<'JOB'
check() { # check DEV: 4 MiB of random data written with O_DIRECT, read back, compared
	dd if=/dev/urandom of=/tmp/a bs=1M count=4 2>/dev/null &&
	dd if=/tmp/a of=/dev/$1 bs=1M oflag=direct 2>/dev/null &&
	dd if=/dev/$1 of=/tmp/b bs=1M count=4 iflag=direct 2>/dev/null &&
	cmp /tmp/a /tmp/b
}
n=0 t0=$(cut -d. -f1 /proc/uptime)
while [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt LOOP_S ]; do
	check vda || { echo "vda failed after $n"; exit 1; }
	check vdb || { echo "vdb failed after $n"; exit 1; }
	n=$((n + 1))
	echo "pass $n"
done
echo "loop $n ok"
JOB
LOOP_S=$((100 + 40 * TRIPS)) # the guest's checks outlast the migrations
sed -i "s/LOOP_S/$LOOP_S/" "$T/run.sh"
lv_guest_files "$img" "$T/run.sh" ||
	{ ko "guest job"; finish; }
lv_domain_xml "$DOM" "$pin" "${FEMUD_GUEST_QEMU:-}" "$T/vda.xml" "$T/vdb.xml"
virsh_a create "$T/dom.xml" >"$T/create" 2>&1 && ok "virsh create on the first libvirtd" ||
	{ ko "virsh create: $(cat "$T/create")"; finish; }
lv_domain_qemu_check "$A" "$DOM"

passes() { grep -c '^pass ' "$T/out" 2>/dev/null; }
# wait_passes N WHAT: the guest reports N passes (fails on a failed check or its end)
wait_passes() {
	for _ in $(seq 1 240); do
		[ "$(passes)" -ge "$1" ] && return 0
		grep -q 'failed' "$T/out" 2>/dev/null && break
		grep -q '^loop ' "$T/out" 2>/dev/null && break
		sleep 1
	done
	ko "$2: $(tail -3 "$T/out" 2>/dev/null; cat "$T/status" 2>/dev/null; tail -n 20 "$T/console.log")"
	finish
}
# migrate FROM-URI TO-URI NAME: virsh migrate --live, the guest's checks go on there
migrate() {
	local n0 t0 s started
	wait_passes $(($(passes) + 2)) "checks before the migration to $3"
	n0=$(passes)
	started=$(grep -c "queue 0: started" "$T/femud.log")
	t0=$(date +%s.%N)
	virsh -q -c "$1" migrate --live --verbose "$DOM" "$2" --migrateuri tcp://127.0.0.1 \
		>"$T/migrate" 2>&1 ||
		{ ko "virsh migrate --live to $3: $(tr '\r' '\n' <"$T/migrate" | tail -3)"; finish; }
	s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	ok "virsh migrate --live to $3 in $s s"
	[ "$(virsh -q -c "$2" domstate "$DOM" 2>&1)" = running ] &&
		! virsh -q -c "$1" domstate "$DOM" >/dev/null 2>&1 &&
		ok "the domain runs on $3 only" || ko "domain state after the migration to $3"
	virsh -q -c "$2" domjobinfo "$DOM" --completed 2>/dev/null |
		sed -n 's/^Total downtime: *\([0-9]*\) *\(.*\)/INFO: downtime \1 \2/p'
	[ "$(grep "queue 0: started" "$T/femud.log" | tail -n +$((started + 1)) |
		grep -c "dirty logging")" -ge 2 ] &&
		ok "both disks' queues logged dirty pages during the migration to $3" ||
		ko "dirty logging: $(grep "queue 0: started" "$T/femud.log" | tail -4)"
	wait_passes $((n0 + 3)) "checks after the migration to $3"
	ok "the guest's checks go on after the migration to $3 ($(passes) passes)"
}
wait_passes 1 "the first check on the first libvirtd"
for _ in $(seq 1 "$TRIPS"); do
	migrate "$A" "$B" "the second libvirtd"
	migrate "$B" "$A" "the first libvirtd"
done
for _ in $(seq 1 $((LOOP_S + 120))); do virsh_a domstate "$DOM" >/dev/null 2>&1 || break; sleep 1; done
grep -q "^loop [1-9][0-9]* ok$" "$T/out" && [ "$(gl_status "$T")" = 0 ] &&
	ok "guest: $(grep '^loop' "$T/out") checks of vda and vdb, every one identical" ||
	ko "guest: $(tail -3 "$T/out"; cat "$T/status"; tail -n 20 "$T/console.log")"
lv_femud_stop
finish
