#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libvirt_guest.sh - femud disks in a libvirt domain, the way a user runs
# them: libvirtd (started here when nothing runs it) creates a TCG domain
# from the guest image with the disk element of femuctl libvirt-xml and the
# domain lines its comment asks for (memfd shared memory, acpi, vcpupin and
# emulatorpin off femud's poller CPU); QEMU runs as libvirt-qemu, so the
# socket is sock_owner=libvirt-qemu,sock_mode=0660.  The guest writes 4 MiB
# to /dev/vda and reads them back; then a device made with femuctl create is
# hot-plugged with virsh attach-device (libvirt-xml's element) and the guest
# writes and reads /dev/vdb.  femud's counters show the requests on both.
# Then, with the guest checking /dev/vda in a loop, femud is stopped and
# started again from femuctl save-config's file (media on mem_path files):
# QEMU reconnects (<reconnect>) and every check in the loop passes.  The
# hot-plugged disk has no reconnect (libvirt 9.0 adds its chardev with
# reconnect 0, whatever its <reconnect> says), so it is re-plugged as
# docs/operations.md says (virsh detach-device, attach-device): the guest
# reads back what it wrote before the restart and writes and reads it again.
# Root only.  Args: femuctl path.  Env: FEMUD, SRCDIR; FEMUD_GUEST_QEMU
# (test/guest/qemu10.sh sets it) is the domain's <emulator>, else libvirt's
# default QEMU.  The guest is the project's own (test/guest/guest-lib.sh: the
# image, the job's initrd and its result ports; libvirt gets them as
# <kernel>, <initrd> and channels).
set -u
CTL=${1:?usage: libvirt_guest.sh FEMUCTL}
# shellcheck source=libvirt-lib.sh
. "${SRCDIR:?SRCDIR not set}/test/integration/libvirt-lib.sh"
lv_need

T=$(mktemp -d /tmp/femud-libvirt.XXXXXX)
chmod 755 "$T" # QEMU (libvirt-qemu) reaches the sockets and channel files in here
DOM=femud-test-$$
VIRSH=(virsh -q -c qemu:///system)
cleanup() {
	"${VIRSH[@]}" destroy "$DOM" >/dev/null 2>&1
	lv_cleanup
}
trap cleanup EXIT

lv_system_libvirtd

lv_femud_start "$T/femud.log" \
	--dev "path=$T/vda.sock,devsz_mb=64,queues=2,sock_owner=libvirt-qemu,sock_mode=0660,mem_path=$T/vda.mem" ||
	{ ko "femud did not start"; finish; }
ctl() { "$CTL" -s "$T/rpc.sock" "$@"; }
ctl libvirt-xml "$T/vda.sock" vda >"$T/vda.xml" || { ko "libvirt-xml vda"; finish; }
pin=$(sed -n "s/.*<emulatorpin cpuset='\([^']*\)'.*/\1/p" "$T/vda.xml")
[ -n "$pin" ] || { ko "no emulatorpin line: $(cat "$T/vda.xml")"; finish; }

# the guest's job: vda now, then vdb once it is hot-plugged
img=$(gl_image 2>"$T/image.err") || { ko "guest image: $(tail -5 "$T/image.err")"; finish; }
cat >"$T/run.sh" <<'JOB'
check() { # check DEV: 4 MiB of random data written with O_DIRECT, read back, compared
	[ -b /dev/$1 ] || { echo "$1: no such block device"; return 1; }
	dd if=/dev/urandom of=/tmp/a bs=1M count=4 2>/dev/null &&
	dd if=/tmp/a of=/dev/$1 bs=1M oflag=direct 2>/dev/null &&
	dd if=/dev/$1 of=/tmp/b bs=1M count=4 iflag=direct 2>/dev/null &&
	cmp /tmp/a /tmp/b && echo "$1 $(blockdev --getsize64 /dev/$1) ok"
}
check vda || exit 1
i=0
while [ ! -b /dev/vdb ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
check vdb || exit 1
cp /tmp/a /tmp/vdb.before
# vda over and over for 60 s while femud restarts (the host's part)
n=0 t0=$(cut -d. -f1 /proc/uptime)
while [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt 60 ]; do
	check vda >/dev/null || { echo "loop failed after $n"; exit 1; }
	n=$((n + 1))
done
echo "loop $n ok"
# the host re-plugs vdb: it goes, comes back with what it held, and serves
i=0
while [ -b /dev/vdb ] && [ $i -lt 180 ]; do sleep 1; i=$((i + 1)); done
[ -b /dev/vdb ] && { echo "vdb never went"; exit 1; }
echo "vdb gone"
i=0
while [ ! -b /dev/vdb ] && [ $i -lt 180 ]; do sleep 1; i=$((i + 1)); done
dd if=/dev/vdb of=/tmp/c bs=1M count=4 iflag=direct 2>/dev/null && cmp /tmp/vdb.before /tmp/c &&
	echo "vdb kept its data" || exit 1
r=$(check vdb) && echo "replugged $r"
JOB
lv_guest_files "$img" "$T/run.sh" ||
	{ ko "guest job"; finish; }

lv_domain_xml "$DOM" "$pin" "${FEMUD_GUEST_QEMU:-}" "$T/vda.xml"
virt-xml-validate "$T/dom.xml" domain >/dev/null 2>&1 && ok "the domain passes virt-xml-validate" || ko "domain XML invalid"
"${VIRSH[@]}" create "$T/dom.xml" >"$T/create" 2>&1 && ok "virsh create with libvirt-xml's disk" ||
	{ ko "virsh create: $(cat "$T/create")"; finish; }
lv_domain_qemu_check qemu:///system "$DOM"

# wait for a line (or the domain's end: a guest that panicked is destroyed)
wait_out() {
	for _ in $(seq 1 300); do
		grep -q "$1" "$T/out" && return 0
		"${VIRSH[@]}" domstate "$DOM" >/dev/null 2>&1 || return 1
		sleep 1
	done
}
wait_out '^vda '
grep -qx "vda 67108864 ok" "$T/out" && ok "guest: 4 MiB on /dev/vda written, read back, identical" ||
	{ ko "vda in the guest: $(cat "$T/out" "$T/status"; tail -n 20 "$T/console.log")"; finish; }

# hot-plug: femuctl create, libvirt-xml, virsh attach-device
ctl create "path=$T/vdb.sock,devsz_mb=32,queues=1,sock_owner=libvirt-qemu,sock_mode=0660,mem_path=$T/vdb.mem" >/dev/null &&
	ctl libvirt-xml "$T/vdb.sock" vdb >"$T/vdb.xml" &&
	"${VIRSH[@]}" attach-device "$DOM" "$T/vdb.xml" --live >"$T/attach" 2>&1 &&
	ok "femuctl create + virsh attach-device of libvirt-xml's vdb" || ko "hot-plug: $(cat "$T/attach")"
wait_out '^vdb '
grep -qx "vdb 33554432 ok" "$T/out" && ok "guest: hot-plugged /dev/vdb written, read back, identical" ||
	ko "vdb in the guest: $(cat "$T/out" "$T/status"; tail -n 20 "$T/console.log")"
ctl stats --json >"$T/stats.json" &&
	python3 - "$T/stats.json" "$T" <<'PY' && ok "femud counted the guest's requests on vda and vdb" || ko "counters: $(head -c 600 "$T/stats.json")"
import json, sys
s = json.load(open(sys.argv[1]))
req = {d["path"].rsplit("/", 1)[1]: d["totals"]["requests"] for d in s["devices"]}
assert req.get("vda.sock", 0) > 0 and req.get("vdb.sock", 0) > 0, req
PY
grep -q "frontend pid [0-9]* uid $(id -u libvirt-qemu) " "$T/femud.log" &&
	ok "QEMU connected as libvirt-qemu" || ko "frontend uid: $(grep frontend "$T/femud.log")"

# restart under the guest's I/O, from the saved configuration
ctl save-config "$T/femud.json" || ko "save-config"
lv_femud_stop "under I/O"
lv_femud_start "$T/femud2.log" --config "$T/femud.json" >"$T/restart" &&
	ok "femud restarted from femuctl save-config's file" || ko "restart: $(cat "$T/restart")"
sleep 25 # two reconnect periods, inside the guest's 60 s loop
# the hot-plugged disk's chardev: "disconnected:unix:..." while QEMU does not reconnect it
"${VIRSH[@]}" qemu-monitor-command "$DOM" '{"execute":"query-chardev"}' >"$T/chardev" 2>&1
echo "INFO: after the restart, QEMU's disk chardevs: $(python3 -c 'import json, sys
print(" ".join(c["label"] + "=" + c["filename"] for c in json.load(open(sys.argv[1]))["return"]
               if "-vu-" in c["label"]))' "$T/chardev" 2>&1)"
grep -q "vdb.sock: frontend pid" "$T/femud2.log" && echo "INFO: the hot-plugged vdb reconnected by itself" ||
	echo "INFO: the hot-plugged vdb did not reconnect within 25 s (libvirt's chardev-add has no reconnect)"
# re-plug vdb once the guest's loop is over: detach, wait for the guest and
# libvirt to let it go, attach the same element again
wait_out '^loop '
"${VIRSH[@]}" detach-device "$DOM" "$T/vdb.xml" --live >"$T/detach" 2>&1 || ko "detach-device: $(cat "$T/detach")"
wait_out '^vdb gone'
for _ in $(seq 1 60); do "${VIRSH[@]}" domblklist "$DOM" | grep -q '^ *vdb ' || break; sleep 1; done
"${VIRSH[@]}" attach-device "$DOM" "$T/vdb.xml" --live >"$T/attach2" 2>&1 &&
	ok "vdb re-plugged after the restart (virsh detach-device, attach-device)" ||
	ko "re-plug: $(cat "$T/attach2")"
for _ in $(seq 1 300); do "${VIRSH[@]}" domstate "$DOM" >/dev/null 2>&1 || break; sleep 1; done
grep -q "^loop [1-9][0-9]* ok$" "$T/out" && [ "$(gl_status "$T")" = 0 ] &&
	ok "guest: $(grep '^loop' "$T/out") checks of vda across the restart" ||
	ko "guest across the restart: $(cat "$T/out" "$T/status"; tail -n 20 "$T/console.log")"
grep -q "vda.sock: frontend pid [0-9]* uid $(id -u libvirt-qemu) .*connected" "$T/femud2.log" &&
	ok "QEMU reconnected to the new femud's vda socket" || ko "reconnect: $(grep -i connect "$T/femud2.log")"
grep -q "^vdb kept its data$" "$T/out" && grep -qx "replugged vdb 33554432 ok" "$T/out" &&
	ok "guest: re-plugged /dev/vdb read back what it held before the restart, written and read again" ||
	ko "vdb after the re-plug: $(cat "$T/out" "$T/status"; tail -n 20 "$T/console.log")"
grep -q "vdb.sock: frontend pid [0-9]* uid $(id -u libvirt-qemu) .*connected" "$T/femud2.log" &&
	ok "QEMU connected to the new femud's vdb socket" || ko "vdb connect: $(grep -i vdb "$T/femud2.log")"
lv_femud_stop
finish
