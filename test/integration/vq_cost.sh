#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vq_cost.sh - tools/bench/vq-cost serves every request of its runs (a failed one
# ends it with exit 1), its JSON carries both sides of the ratio and the
# ratio follows from them, --cold-ring and 512 B runs work, bad options exit 2
# naming the option, and the copy path's prefetch instructions are in the
# binary.  No figure is compared with a fixed number.
# Args: vq-cost path.
set -u
VQC=$1
fails=0
ok() { echo "ok - $*"; }
ko() { echo "not ok - $*"; fails=$((fails + 1)); }

for args in "--bs 4096 --qd 32" "--bs 512 --qd 128 --cold-ring" "--bs 65536 --qd 4"; do
	out=$("$VQC" --size-mb 16 --no-huge --time 0.2 --json $args 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && python3 -c '
import json,sys
j=json.loads(sys.argv[1])
assert j["vq_ns"]>0 and j["copy_ns"]>0 and j["batches"]>=3, j
# vq_ns and copy_ns are printed to 0.1 ns: the ratio of the printed values within that rounding
tol = 0.05 / j["vq_ns"] + 0.05 * j["copy_ns"] / j["vq_ns"] ** 2 + 5e-4
assert abs(j["vq_share_of_copy"]-j["copy_ns"]/j["vq_ns"])<tol, j
assert j["vq_per_s"]>0 and abs(j["vq_per_s"]*j["vq_ns"]/1e9-1)<0.01, j' "$out"; then
		ok "$args: figures consistent"
	else
		ko "$args: rc $rc: $out"
	fi
done

bad() { # name option args...
	local name=$1 what=$2
	shift 2
	local err rc
	err=$("$VQC" "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "$what" <<<"$err" && ok "$name: exit 2 naming $what" ||
		ko "$name: rc $rc: $err"
}
bad bs_odd --bs --bs 1000
bad qd_zero --qd --qd 0
bad qd_big --qd --qd 400
bad size --size-mb --size-mb 0
bad time --time --time 0
bad extra unexpected stray

# The prefetches the copy path relies on are in the code that runs (vq-cost links femud's
# fm_data.c and vq.c): GCC 12 deletes a call to a function that only prefetches when it
# does not inline it, without a warning.
has_prefetch() { # function instruction...
	local fn=$1 body
	shift
	body=$(objdump -d --no-show-raw-insn "$VQC" | awk -v f="<$fn>:" '
		$2 == f { on = 1; next } on && /^[0-9a-f]+ <.*>:$/ { exit } on')
	for insn in "$@"; do
		grep -qw "$insn" <<<"$body" || { echo "$fn: no $insn"; return 1; }
	done
}
# The write hint is prefetchw only where the build targets PRFCHW (-Dcpu=native here);
# the default generic build turns it into a read hint.
WRITE_HINT=prefetchw
cpu=$(meson introspect --buildoptions "${BUILDDIR:-build}" 2>/dev/null |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "cpu"))' 2>/dev/null)
[ "$cpu" = native ] || WRITE_HINT=prefetcht0
if ! command -v objdump >/dev/null; then
	ko "prefetches: objdump (binutils) not installed"
elif why=$(has_prefetch fm_data_read prefetcht1 &&
	has_prefetch fm_data_prefetch prefetcht0 prefetcht1 "$WRITE_HINT" &&
	has_prefetch pmd_vq_sweep_split prefetcht0 && has_prefetch batch_copy prefetcht0 prefetcht1); then
	ok "prefetches compiled in (cpu=${cpu:-?}): fm_data_read, fm_data_prefetch, pmd_vq_sweep_split, batch_copy"
else
	ko "prefetches: $why"
fi

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
