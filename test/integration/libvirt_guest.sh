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
# reconnect 0, whatever its <reconnect> says), so it is re-plugged as the
# README says (virsh detach-device, attach-device): the guest reads back
# what it wrote before the restart and writes and reads it again.
# Root only.  Args: femuctl path.  Env: FEMUD, SRCDIR; FEMUD_GUEST_QEMU
# (test/guest/qemu10.sh sets it) is the domain's <emulator>, else libvirt's
# default QEMU.  The guest is the project's own (test/guest/guest-lib.sh: the
# image, the job's initrd and its result ports; libvirt gets them as
# <kernel>, <initrd> and channels).
set -u
CTL=${1:?usage: libvirt_guest.sh FEMUCTL}
FEMUD=${FEMUD:?FEMUD not set}
SRC=${SRCDIR:?SRCDIR not set}
# shellcheck source=../guest/guest-lib.sh
. "$SRC/test/guest/guest-lib.sh"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (libvirtd, socket owner)"; exit 1; }
for c in virsh libvirtd virtlogd; do
	command -v $c >/dev/null || { echo "FAIL: $c missing (apt-get install libvirt-daemon-system)"; exit 1; }
done
id libvirt-qemu >/dev/null 2>&1 || { echo "FAIL: no libvirt-qemu user"; exit 1; }

T=$(mktemp -d /tmp/femud-libvirt.XXXXXX)
chmod 755 "$T" # QEMU (libvirt-qemu) reaches the sockets and channel files in here
DOM=femud-test-$$
VIRSH=(virsh -q -c qemu:///system)
FPID= started=()
cleanup() {
	"${VIRSH[@]}" destroy "$DOM" >/dev/null 2>&1
	[ -n "$FPID" ] && kill "$FPID" 2>/dev/null && sleep 1 && kill -9 "$FPID" 2>/dev/null
	for p in "${started[@]}"; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# libvirtd: the one that runs, else ours (no init system starts it here)
if ! "${VIRSH[@]}" version >/dev/null 2>&1; then
	virtlogd -d -p "$T/virtlogd.pid" && started+=("$T/virtlogd.pid")
	libvirtd -d -p "$T/libvirtd.pid" && started+=("$T/libvirtd.pid")
	for _ in $(seq 1 60); do "${VIRSH[@]}" version >/dev/null 2>&1 && break; sleep 0.5; done
fi
"${VIRSH[@]}" version >"$T/version" 2>&1 && ok "libvirtd: $(grep -i hypervisor "$T/version")" ||
	{ ko "libvirtd not reachable: $(cat "$T/version")"; finish; }

"$FEMUD" --no-huge --rpc "$T/rpc.sock" \
	--dev "path=$T/vda.sock,devsz_mb=64,queues=2,sock_owner=libvirt-qemu,sock_mode=0660,mem_path=$T/vda.mem" \
	>"$T/femud.log" 2>&1 &
FPID=$!
for _ in $(seq 1 300); do grep -q '^femud: ready' "$T/femud.log" && break; sleep 0.1; done
grep -q '^femud: ready' "$T/femud.log" || { ko "femud: $(cat "$T/femud.log")"; finish; }
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
gl_job_init "$T" && gl_job_cmd "$T" "$(cat "$T/run.sh")" && gl_boot_args "$T" "$img" 1 ||
	{ ko "guest job"; finish; }
kernel=$img/vmlinuz
[ -f "$img/vmlinux" ] && kernel=$img/vmlinux
cp "$kernel" "$T/kernel"

python3 - "$T" "$DOM" "$pin" "${FEMUD_GUEST_QEMU:-}" <<'PY'
import sys
t, name, pin, qemu = sys.argv[1:]
emulator = f"    <emulator>{qemu}</emulator>\n" if qemu else ""
disk = open(f"{t}/vda.xml").read()
disk = disk[disk.index("<disk"):]
chans = "".join(f"    <channel type='file'><source path='{t}/{p}'/>"
                f"<target type='virtio' name='org.femud.{p}'/></channel>\n"
                for p in ("out", "err", "status"))
open(f"{t}/dom.xml", "w").write(f"""<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>512</memory>
  <vcpu>1</vcpu>
  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
  <cputune><vcpupin vcpu='0' cpuset='{pin}'/><emulatorpin cpuset='{pin}'/></cputune>
  <os><type arch='x86_64' machine='q35'>hvm</type>
    <kernel>{t}/kernel</kernel><initrd>{t}/initrd</initrd>
    <cmdline>console=ttyS0 panic=-1 quiet no_timer_check femud_guest.disks=1</cmdline></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot><on_crash>destroy</on_crash>
  <devices>
{emulator}{disk}    <controller type='pci' index='0' model='pcie-root'/>
    <controller type='pci' model='pcie-root-port'/>
    <controller type='pci' model='pcie-root-port'/>
    <controller type='pci' model='pcie-root-port'/>
    <controller type='pci' model='pcie-root-port'/>
    <controller type='pci' model='pcie-root-port'/>
    <controller type='pci' model='pcie-root-port'/>
    <serial type='file'><source path='{t}/console.log'/><target port='0'/></serial>
    <controller type='virtio-serial' index='0'/>
{chans}  </devices>
</domain>
""")
PY
virt-xml-validate "$T/dom.xml" domain >/dev/null 2>&1 && ok "the domain passes virt-xml-validate" || ko "domain XML invalid"
"${VIRSH[@]}" create "$T/dom.xml" >"$T/create" 2>&1 && ok "virsh create with libvirt-xml's disk" ||
	{ ko "virsh create: $(cat "$T/create")"; finish; }
# the QEMU the domain runs: FEMUD_GUEST_QEMU's when set, else the system's
want=$("${FEMUD_GUEST_QEMU:-qemu-system-x86_64}" --version | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p')
"${VIRSH[@]}" qemu-monitor-command "$DOM" '{"execute":"query-version"}' >"$T/qver" 2>&1
got=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["return"]["qemu"]; print("%d.%d" % (v["major"], v["minor"]))' "$T/qver" 2>/dev/null)
[ -n "$want" ] && [ "$got" = "$want" ] && ok "the domain runs QEMU $got" ||
	ko "domain QEMU '$got', want '$want': $(cat "$T/qver")"

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
kill -TERM "$FPID"
wait "$FPID"
rc=$?
[ $rc = 0 ] && ok "femud exit 0 on SIGTERM under I/O" || ko "femud exit $rc: $(tail -n 5 "$T/femud.log")"
"$FEMUD" --no-huge --rpc "$T/rpc.sock" --config "$T/femud.json" >"$T/femud2.log" 2>&1 &
FPID=$!
for _ in $(seq 1 300); do grep -q '^femud: ready' "$T/femud2.log" && break; sleep 0.1; done
grep -q '^femud: ready' "$T/femud2.log" && ok "femud restarted from femuctl save-config's file" ||
	ko "restart: $(cat "$T/femud2.log")"
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
kill -TERM "$FPID"
wait "$FPID"
rc=$?
FPID=
[ $rc = 0 ] && ok "femud exit 0 on SIGTERM" || ko "femud exit $rc"
finish
