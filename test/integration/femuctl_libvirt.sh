#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femuctl_libvirt.sh - femuctl version / libvirt-xml against a running femud:
# the version femud reports over RPC is femud --version's; the <disk
# type='vhostuser'> element names the device's socket (XML-escaped) and its
# queue count, without <serial> or <readonly/> (libvirt refuses them there:
# a comment says the device's); the domain notes name the pollers'
# CPUs for emulatorpin/vcpupin; the output parses as XML, and a domain built
# from it passes virt-xml-validate; a socket that is no device exits 3.
# Args: femu-bench path, femuctl path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl not built ('$CTL')"; exit 1; }
command -v virt-xml-validate >/dev/null ||
	{ echo "FAIL: virt-xml-validate missing (apt-get install libvirt-clients)"; exit 1; }

A=$T/a.sock B="$T/b&<'q.sock"
# no --lcores: femud polls on the last CPU it may use
start_femud_opts d --rpc "$T/d.rpc" --dev "path=$A,devsz_mb=16,queues=2" \
	--dev "path=$B,devsz_mb=8,queues=3,readonly=1,serial=SN-42" || { ko "femud start"; finish; }
ctl() { "$CTL" -s "$RPC" "$@"; }

want="femud $("$FEMUD" --version | awk '{print $2}')"
ctl version >"$T/ver" 2>&1 && grep -qx "$want" "$T/ver" && grep -qx "femuctl ${want#femud }" "$T/ver" &&
	ok "femuctl version: $(tr '\n' ' ' <"$T/ver")" || ko "version: $(cat "$T/ver"), want $want"
ctl call version | python3 -c 'import json,sys; m=json.load(sys.stdin)["methods"]; assert "version" in m and "placement" in m and "create" in m' &&
	ok "RPC version lists its methods" || ko "RPC version methods"
ctl call placement >"$T/place.json" &&
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["pid"]==int(sys.argv[2]), p; assert p["poller_cpus"]==[int(sys.argv[3])], p' \
		"$T/place.json" "$FEMUD_PID" "$(sed -n 's/.*EAL up: .*, lcores \([0-9]*@\)\{0,1\}\([0-9]*\),.*/\2/p' "$T/d.log")" &&
	ok "placement: femud's pid and its poller CPU" || ko "placement: $(cat "$T/place.json" "$T/d.log")"

# check_xml FILE SOCK QUEUES SERIAL READONLY TARGET: the disk element's values
check_xml() {
	python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
f, sock, queues, serial, ro, target = sys.argv[1:]
text = open(f).read()
disk = ET.fromstring(text)  # one element; comments before it are allowed
assert disk.tag == "disk" and disk.get("type") == "vhostuser" and disk.get("device") == "disk", disk.attrib
src = disk.find("source")
assert src.get("type") == "unix" and src.get("path") == sock, (src.attrib, sock)
rec = src.find("reconnect")
assert rec.get("enabled") == "yes" and int(rec.get("timeout")) > 0, rec.attrib
assert disk.find("driver").get("queues") == queues, disk.find("driver").attrib
assert disk.find("target").get("dev") == target and disk.find("target").get("bus") == "virtio"
# libvirt refuses <serial> and <readonly/> on a vhostuser disk: femud's keys say them, in a comment
assert disk.find("serial") is None and disk.find("readonly") is None
head = text[:text.index("<disk")]
assert f"serial {serial}\n" in head or f"serial {serial}, read-only\n" in head, head
assert (f"serial {serial}, read-only\n" in head) == (ro == "1"), head
for need in ("<source type='memfd'/>", "<access mode='shared'/>", "<acpi/>", "<emulatorpin cpuset=", "<vcpupin vcpu='0' cpuset=",
             "virsh detach-device, attach-device", "femuctl save-config"):
    assert need in text, need
PY
}
ctl libvirt-xml "$A" >"$T/a.xml" 2>"$T/a.err" && check_xml "$T/a.xml" "$A" 2 femud 0 vdb &&
	ok "libvirt-xml: socket, 2 queues, serial, reconnect, domain notes" ||
	ko "libvirt-xml A: $(cat "$T/a.xml" "$T/a.err")"
ctl libvirt-xml "$B" vdc >"$T/b.xml" 2>"$T/b.err" && check_xml "$T/b.xml" "$B" 3 SN-42 1 vdc &&
	ok "libvirt-xml: escaped socket path, 3 queues, serial and read-only noted, target vdc" ||
	ko "libvirt-xml B: $(cat "$T/b.xml" "$T/b.err")"
pcpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["poller_cpus"][0])' "$T/place.json")
grep -q "poller CPUs ($pcpu)" "$T/a.xml" && ! grep -q "emulatorpin cpuset='[^']*\b$pcpu\b" "$T/a.xml" &&
	ok "emulatorpin/vcpupin leave out the poller CPU $pcpu" || ko "pinning notes: $(cat "$T/a.xml")"

# A domain around the disk (and the notes' lines) must pass libvirt's schema.
python3 - "$T/a.xml" "$T/dom.xml" <<'PY'
import sys, re
disk = open(sys.argv[1]).read()
disk = disk[disk.index("<disk"):]
dom = f"""<domain type='qemu'>
  <name>femud-test</name>
  <memory unit='MiB'>512</memory>
  <vcpu>1</vcpu>
  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <features><acpi/></features>
  <devices>
{disk}  </devices>
</domain>
"""
open(sys.argv[2], "w").write(dom)
PY
virt-xml-validate "$T/dom.xml" domain >"$T/validate" 2>&1 && ok "virt-xml-validate accepts the domain" ||
	ko "virt-xml-validate: $(cat "$T/validate")"

ctl libvirt-xml "$T/none.sock" >"$T/n.out" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "no device" "$T/n.out" && ok "libvirt-xml on no device: exit 3" ||
	ko "libvirt-xml no device: exit $rc $(cat "$T/n.out")"
ctl libvirt-xml >"$T/u.out" 2>&1
[ $? -eq 2 ] && ok "libvirt-xml without SOCK: usage error" || ko "libvirt-xml usage: $(cat "$T/u.out")"
stop_femud
finish
