#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# package_deb.sh - tools/package-deb builds femud_VERSION_amd64.deb; apt
# installs it; the binaries hold no AVX code (the portable -Dcpu=generic
# build); the installed tools run from their install folders (femud
# --version is the tree's version, femu-launch finds femud and femu-place
# beside it, the man pages and units are where man and systemd look,
# systemd-analyze verify accepts the installed unit with its man pages);
# the installed femud.service's ExecStart, run as systemd would (its
# RuntimeDirectory made, FEMUD_OPTS from its EnvironmentFile), serves the
# example configuration's disk: femu-bench writes and verifies it, femuctl
# reaches the control socket; SIGTERM exits 0; apt remove takes the files
# away and purge the configuration.  Root only; refuses to run when a femud
# package is already installed (it would be replaced and removed).
# Env: SRCDIR.
set -u
SRC=${SRCDIR:?SRCDIR not set}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
[ "$(id -u)" = 0 ] || { echo "FAIL: installs a package: run as root"; exit 1; }
if dpkg-query -W -f='${Status}' femud 2>/dev/null | grep -q 'ok installed'; then
	echo "FAIL: a femud package is installed already; this test would replace and remove it"
	exit 1
fi
[ -e /etc/femud ] || [ -e /run/femud ] &&
	{ echo "FAIL: /etc/femud or /run/femud exists (a femud installed another way?)"; exit 1; }
T=$(mktemp -d /tmp/femud-deb.XXXXXX)
installed=0 FPID=
cleanup() {
	[ -n "$FPID" ] && kill -9 "$FPID" 2>/dev/null
	[ $installed = 1 ] && apt-get purge -y -qq femud >/dev/null 2>&1
	rm -f /etc/femud/femud.env
	rmdir /etc/femud 2>/dev/null
	rm -rf /run/femud "$T"
}
trap cleanup EXIT

VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -n1)
DEB=$("$SRC/tools/package-deb" --out "$T/deb" 2>"$T/pkg.err") && [ -f "$DEB" ] &&
	ok "tools/package-deb built $(basename "$DEB")" ||
	{ ko "package-deb: $(tail -n 30 "$T/pkg.err")"; echo "$pass passed, $fail failed"; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >"$T/apt.log" 2>&1 && installed=1 &&
	ok "apt install ./$(basename "$DEB")" || ko "apt install: $(tail -n 20 "$T/apt.log")"

for b in femud femuctl femu-place femu-launch femu-bench; do
	[ -x /usr/bin/$b ] || ko "/usr/bin/$b missing"
done
[ ! -e /usr/bin/femu-floor ] && ok "binaries in /usr/bin, femu-floor not installed" || ko "femu-floor installed"
[ "$(/usr/bin/femud --version)" = "femud $VERSION" ] && [ "$(/usr/bin/femuctl --version)" = "femuctl $VERSION" ] &&
	ok "installed femud/femuctl --version: $VERSION" || ko "versions: $(/usr/bin/femud --version)"
# -Dcpu=generic: DPDK's corei7 baseline, no AVX (VEX) code that an older CPU cannot run
avx=$(for b in femud femu-bench femuctl femu-place; do objdump -d /usr/bin/$b; done | grep -c '%[yz]mm')
[ "$avx" = 0 ] && ok "packaged binaries use no AVX registers (portable build)" || ko "$avx AVX instructions"
[ "$(man -w femud)" = /usr/share/man/man8/femud.8.gz ] && [ "$(man -w femuctl)" = /usr/share/man/man1/femuctl.1.gz ] &&
	ok "man finds femud(8), femuctl(1)" || ko "man -w: $(man -w femud femuctl 2>&1)"
systemd-analyze verify /lib/systemd/system/femud.service >"$T/verify" 2>&1 && [ ! -s "$T/verify" ] &&
	ok "systemd-analyze verify the installed femud.service (man pages found)" || ko "verify: $(cat "$T/verify")"
# femu-launch outside the tree, PATH without the tree: femud and femu-place from /usr/bin
(cd / && env -i PATH=/usr/bin:/bin /usr/bin/femu-launch --dry-run --no-reserve -- --vcpus 1 --pollers 1 \
	--mem 256M --devsz 64M) >"$T/launch" 2>&1
grep -q "/usr/bin/femud " "$T/launch" && ! grep -q "$SRC" "$T/launch" &&
	ok "installed femu-launch plans with /usr/bin/femud, no source tree path" || ko "femu-launch: $(tail -n 20 "$T/launch")"

# ExecStart of the installed unit, as systemd runs it
exec_line=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/femud.service)
env_file=$(sed -n 's/^EnvironmentFile=-//p' /lib/systemd/system/femud.service)
echo 'FEMUD_OPTS="--no-huge"' >"$env_file"
FEMUD_OPTS=$(. "$env_file" && echo "$FEMUD_OPTS")
mkdir -m 0755 /run/femud
read -ra argv <<<"${exec_line//\$FEMUD_OPTS/$FEMUD_OPTS}"
"${argv[@]}" >"$T/femud.log" 2>&1 &
FPID=$!
sock=$(python3 -c 'import json; print(json.load(open("/etc/femud/femud.json"))["devices"][0]["path"])')
for _ in $(seq 1 600); do grep -q '^femud: ready' "$T/femud.log" && break; kill -0 $FPID 2>/dev/null || break; sleep 0.1; done
[ -S "$sock" ] && [ -S /run/femud/rpc.sock ] && ok "installed femud serves $sock from /etc/femud/femud.json" ||
	ko "femud did not start: $(cat "$T/femud.log")"
/usr/bin/femu-bench -q -s "$sock" --rw write --verify --size 64M --bs 4k,64k >"$T/w" 2>&1 &&
	/usr/bin/femu-bench -q -s "$sock" --rw read --verify --size 64M --bs 4k,64k >"$T/r" 2>&1 &&
	ok "femu-bench write + read --verify on the installed femud's disk" || ko "femu-bench: $(cat "$T/w" "$T/r")"
/usr/bin/femuctl -s /run/femud/rpc.sock version | grep -qx "femud $VERSION" &&
	/usr/bin/femuctl -s /run/femud/rpc.sock libvirt-xml "$sock" | grep -q "path='$sock'" &&
	ok "femuctl version and libvirt-xml on /run/femud/rpc.sock" || ko "femuctl on the installed femud"
kill -TERM $FPID
wait $FPID
rc=$?
FPID=
[ $rc = 0 ] && [ ! -e "$sock" ] && ok "SIGTERM: exit 0, socket removed" || ko "stop: exit $rc, $(tail -n 5 "$T/femud.log")"
rm -f "$env_file"
rm -rf /run/femud

DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq femud >"$T/rm.log" 2>&1 &&
	[ ! -e /usr/bin/femud ] && [ ! -e /lib/systemd/system/femud.service ] && [ ! -e /usr/share/man/man8/femud.8.gz ] &&
	ok "apt remove: binaries, unit and man pages gone" || ko "apt remove: $(cat "$T/rm.log")"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq femud >>"$T/rm.log" 2>&1 && installed=0 &&
	[ ! -e /etc/femud/femud.json ] && ok "apt purge: /etc/femud/femud.json gone" || ko "purge: $(cat "$T/rm.log")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
