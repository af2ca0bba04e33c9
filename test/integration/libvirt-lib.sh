# SPDX-License-Identifier: GPL-2.0-or-later
# libvirt-lib.sh - what the libvirt tests share (sourced; root): a system
# libvirtd (the one that runs, else one started here), a second libvirtd on
# the same host that libvirt takes for another host (for virsh migrate), and
# the TCG domain that boots the project's guest on femud disks.
# Uses: T (the test's directory); env FEMUD, SRCDIR.

FEMUD=${FEMUD:?FEMUD not set}
SRC=${SRCDIR:?SRCDIR not set}
# shellcheck source=../guest/guest-lib.sh
. "$SRC/test/guest/guest-lib.sh"

LV_STARTED=() # pid files of daemons started here (lv_cleanup)
FPID=         # femud's (lv_femud_start)

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

# lv_femud_start LOG ARGS...: femud on $T/rpc.sock without hugepages, its
# output in LOG; true once it is ready (FPID), false with LOG's lines shown
lv_femud_start() {
	local log=$1
	shift
	"$FEMUD" --no-huge --rpc "$T/rpc.sock" "$@" >"$log" 2>&1 &
	FPID=$!
	for _ in $(seq 1 300); do grep -q '^femud: ready' "$log" && return 0; sleep 0.1; done
	echo "femud: $(cat "$log")"
	return 1
}

# lv_femud_stop [WHAT]: SIGTERM to femud, which must exit 0
lv_femud_stop() {
	local rc
	kill -TERM "$FPID"
	wait "$FPID"
	rc=$?
	FPID=
	[ $rc = 0 ] && ok "femud exit 0 on SIGTERM${1:+ $1}" || ko "femud exit $rc"
}

# lv_guest_files IMG JOB-FILE: the guest's boot files in $T (kernel, the
# job's initrd and command line) to run JOB-FILE's commands
lv_guest_files() {
	gl_job_init "$T" && gl_job_cmd "$T" "$(cat "$2")" && gl_boot_args "$T" "$1" 1 || return 1
	if [ -f "$1/vmlinux" ]; then cp "$1/vmlinux" "$T/kernel"; else cp "$1/vmlinuz" "$T/kernel"; fi
}

# lv_need: root, the libvirt daemons, the libvirt-qemu user (FAILS without)
lv_need() {
	local c
	[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (libvirtd, socket owner)"; exit 1; }
	for c in virsh libvirtd virtlogd "$@"; do
		command -v "$c" >/dev/null ||
			{ echo "FAIL: $c missing (apt-get install libvirt-daemon-system)"; exit 1; }
	done
	id libvirt-qemu >/dev/null 2>&1 || { echo "FAIL: no libvirt-qemu user"; exit 1; }
}

# lv_system_libvirtd: qemu:///system reachable, started here when nothing
# runs it (no init system starts it here); the test ends when it is not
lv_system_libvirtd() {
	if ! virsh -q -c qemu:///system version >/dev/null 2>&1; then
		virtlogd -d -p "$T/virtlogd.pid" && LV_STARTED+=("$T/virtlogd.pid")
		libvirtd -d -p "$T/libvirtd.pid" && LV_STARTED+=("$T/libvirtd.pid")
		for _ in $(seq 1 60); do
			virsh -q -c qemu:///system version >/dev/null 2>&1 && break
			sleep 0.5
		done
	fi
	virsh -q -c qemu:///system version >"$T/version" 2>&1 &&
		ok "libvirtd: $(grep -i hypervisor "$T/version")" ||
		{ ko "libvirtd not reachable: $(cat "$T/version")"; finish; }
}

# lv_second_libvirtd DIR: another libvirtd, "host B": its own host UUID, and
# its own /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt
# and /etc/libvirt (copied) in a private mount namespace; everything else
# (femud's sockets, /dev/shm, the test's files) is the host's.  Its URI in
# LV_URI; 1 when it does not answer.  Not in a subshell: lv_cleanup stops
# it.
lv_second_libvirtd() {
	local d=$1 uri
	mkdir -p "$d/etc" "$d/sock" "$d/run" "$d/lib" "$d/cache" "$d/log"
	cp -a /etc/libvirt/. "$d/etc/"
	printf 'host_uuid = "%s"\nunix_sock_dir = "%s"\n' \
		"$(cat /proc/sys/kernel/random/uuid)" "$d/sock" >>"$d/etc/libvirtd.conf"
	unshare -m --propagation private bash -c '
		d=$1
		mkdir -p /run/libvirt
		for m in run:/run/libvirt lib:/var/lib/libvirt cache:/var/cache/libvirt \
			log:/var/log/libvirt etc:/etc/libvirt; do
			mount --bind "$d/${m%%:*}" "${m#*:}" || exit 1
		done
		mkdir -p /var/lib/libvirt/qemu /var/cache/libvirt/qemu /run/libvirt/qemu
		chown libvirt-qemu: /var/lib/libvirt/qemu
		virtlogd -d -p "$d/virtlogd.pid" && libvirtd -d -p "$d/libvirtd.pid"' \
		lv2 "$d" >"$d/start.log" 2>&1 || return 1
	LV_STARTED+=("$d/libvirtd.pid" "$d/virtlogd.pid")
	uri="qemu+unix:///system?socket=$d/sock/libvirt-sock"
	for _ in $(seq 1 60); do
		virsh -q -c "$uri" version >/dev/null 2>&1 && { LV_URI=$uri; return 0; }
		sleep 0.5
	done
	return 1
}

# lv_cleanup: femud and the daemons started here stopped, $T removed
lv_cleanup() {
	local p
	[ -n "$FPID" ] && kill "$FPID" 2>/dev/null && sleep 1 && kill -9 "$FPID" 2>/dev/null
	for p in "${LV_STARTED[@]}"; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	rm -rf "$T"
}

# lv_domain_xml NAME PIN QEMU DISK-XML...: $T/dom.xml, a 1-vCPU TCG q35 domain
# (memfd shared memory, vcpupin and emulatorpin on PIN) booting $T/kernel and
# $T/initrd with the given disk elements (femuctl libvirt-xml's files), the
# console in $T/console.log and the guest's out/err/status ports appended to
# $T/out, $T/err, $T/status (a migrated domain's QEMU goes on in the same
# files); QEMU is the <emulator> when not empty
lv_domain_xml() {
	python3 - "$T" "$@" <<'PY'
import sys
t, name, pin, qemu, *disks = sys.argv[1:]
emulator = f"    <emulator>{qemu}</emulator>\n" if qemu else ""
disk = ""
for f in disks:
    x = open(f).read()
    disk += x[x.index("<disk"):]
chans = "".join(f"    <channel type='file'><source path='{t}/{p}' append='on'/>"
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
    <serial type='file'><source path='{t}/console.log' append='on'/><target port='0'/></serial>
    <controller type='virtio-serial' index='0'/>
{chans}  </devices>
</domain>
""")
PY
}

# lv_domain_qemu_check URI NAME: the domain runs the QEMU the test is for
# (FEMUD_GUEST_QEMU's when set, else the system's), by ok or ko
lv_domain_qemu_check() {
	local want got
	want=$("${FEMUD_GUEST_QEMU:-qemu-system-x86_64}" --version |
		sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p')
	virsh -q -c "$1" qemu-monitor-command "$2" '{"execute":"query-version"}' >"$T/qver" 2>&1
	got=$(python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))["return"]["qemu"]
print("%d.%d" % (v["major"], v["minor"]))' "$T/qver" 2>/dev/null)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "the domain runs QEMU $got" ||
		ko "domain QEMU '$got', want '$want': $(cat "$T/qver")"
}
