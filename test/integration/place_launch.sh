#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# place_launch.sh - tools/femu-launch on this host: --dry-run
# prints the plan's commands; --guest-image starts femud pinned, boots the
# project's guest image (test/guest/guest-image; TCG is fine) with every
# vCPU thread pinned, and the guest writes and reads back data through
# femud. The pinning femu-launch reports must match the plan and keep QEMU
# off femud's CPUs. Hugepages are not reserved (--no-reserve): nr_hugepages
# is shared with the whole host.
# Usage: place_launch.sh FEMU_PLACE   Env: FEMUD, SRCDIR.
set -u
PLACE=${1:?usage: place_launch.sh FEMU_PLACE}
FEMUD=${FEMUD:?FEMUD not set}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
LAUNCH=$SRCDIR/tools/femu-launch
pass=0 fail=0
T=$(mktemp -d /tmp/place-launch.XXXXXX)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

if [ "$(nproc)" -lt 2 ]; then
	# a test that cannot run fails: it does not pass by skipping
	echo "FAIL: place_launch needs 2 CPUs (femud and the guest on separate cores)"
	exit 1
fi
ARGS=(--vcpus 1 --pollers 1 --mem 512M --devsz 64M)
"$PLACE" --json --no-hugepages "${ARGS[@]}" >"$T/plan.json" || { echo "femu-place failed"; exit 1; }
vcpu=$(jq '.guest.cpus[0]' "$T/plan.json")
fcpus=$(jq -r '.femud.cpus | map(tostring) | join(",")' "$T/plan.json")

# --dry-run: the commands, nothing started
out=$("$LAUNCH" --femud "$FEMUD" --femu-place "$PLACE" --dry-run -- "${ARGS[@]}" 2>&1)
if grep -q "^taskset -c $fcpus .*femud --lcores" <<<"$out" && grep -q "^# vCPU 0 -> CPU $vcpu" <<<"$out"; then
	ok "--dry-run prints femud pinned to $fcpus and vCPU 0 -> CPU $vcpu"
else ko "--dry-run: $out"; fi

# unknown option: usage error
if "$LAUNCH" --bogus >/dev/null 2>&1; then ko "--bogus accepted"; else ok "--bogus rejected"; fi

# the real thing
"$LAUNCH" --femud "$FEMUD" --femu-place "$PLACE" --no-reserve --guest-image --timeout 240 --workdir "$T/w" \
	-- "${ARGS[@]}" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ]; then ok "femu-launch --guest-image exit 0"
else ko "femu-launch rc=$rc: $(tail -n 30 "$T/err")"; fi
if grep -Eq "^vCPU 0: thread [0-9]+ -> CPU $vcpu \(verified\)" "$T/out"; then
	ok "vCPU 0 thread pinned to CPU $vcpu, verified"
else ko "vCPU pinning: $(cat "$T/out")"; fi
if grep -q "^femud pid [0-9]*: CPUs $fcpus " "$T/out"; then ok "femud pinned to CPUs $fcpus"
else ko "femud pinning: $(grep femud "$T/out")"; fi
if grep -q MISMATCH "$T/out"; then ko "pinning mismatch: $(grep MISMATCH "$T/out")"
else ok "no pinning mismatch (QEMU off femud's CPUs)"; fi
if grep -q "^67108864$" "$T/out" && grep -q "identical" "$T/out"; then
	ok "guest sees 64 MiB and reads back what it wrote"
else ko "guest check: $(cat "$T/out")"; fi
if grep -q "released\|reserved" "$T/err"; then ko "touched hugepages despite --no-reserve"
else ok "hugepages untouched"; fi
fpid=$(sed -n 's/^femud pid \([0-9]*\):.*/\1/p' "$T/out")
qpid=$(sed -n 's/^QEMU pid \([0-9]*\):.*/\1/p' "$T/out")
if [ -n "$fpid" ] && [ -n "$qpid" ] && ! kill -0 "$fpid" 2>/dev/null && ! kill -0 "$qpid" 2>/dev/null; then
	ok "femud ($fpid) and QEMU ($qpid) stopped"
else ko "processes left: femud '$fpid' QEMU '$qpid'"; fi
if [ -e "$T/w/femud-0.sock" ]; then ko "socket left in the work directory"
else ok "femud removed its socket"; fi

echo "place_launch: $pass passed, $fail failed"
[ $fail -eq 0 ]
