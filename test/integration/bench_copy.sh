#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_copy.sh - tools/bench/copy end to end (not a benchmark: one short run
# at QD8 on a 64 MiB device): it builds this tree with -Dab_phase into a
# temporary directory, femud alternates serving phases with its own copy
# phases, and the tool prints and writes, per queue depth, the copy rate, the
# serving rate and their ratio over phase triples; bad options are refused
# naming the option.  No performance figure is asserted.
# Args: femu-bench path.  Env: FEMUD, SRCDIR.
. "$(dirname "$0")/femu_bench_lib.sh"

timeout 400 "$SRCDIR/tools/bench/copy" --qd 8 --time 3 --phase 2000 --size-mb 64 --copy-slots qd \
	--build "$T/bab" --json "$T/c.json" >"$T/c.out" 2>"$T/c.err"
RC=$?
cat "$T/c.out"
[ "$RC" -eq 0 ] && ok "tools/bench/copy exit 0" || { ko "tools/bench/copy exit $RC"; cat "$T/c.err"; }
grep -qE '^  QD8 +all +[0-9]+ +[0-9.]+[kM] +[0-9.]+[kM] +[0-9.]+% ' "$T/c.out" &&
	ok "a QD8 row with copy rate, serving rate and ratio" || ko "no QD8 row"
if python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["bs"] == 4096 and j["phase"] == 2000 and j["size_mb"] == 64, j
assert j["copy_slots"] == "qd", j
a = j["qd"]["8"]["all"]
assert a["triples"] > 10 and 0 <= a["ahead"] <= a["triples"], a
assert a["copy_rate"] > 0 and a["serve_rate"] > 0, a
assert abs(a["serve_over_copy"] * a["copy_over_serve"] - 1) < 1e-9, a
assert a["serve_over_copy_q1"] <= a["serve_over_copy"] <= a["serve_over_copy_q3"], a
for k in ("fast", "slow"):
    if k in j["qd"]["8"]:
        assert j["qd"]["8"][k]["triples"] <= a["triples"], j
' "$T/c.json"; then
	ok "JSON: triples, both rates, the ratio and its quartiles"
else
	ko "JSON"
fi
out=$("$SRCDIR/tools/bench/copy" --bs 1000 --build "$T/bab" 2>&1)
[ $? -ne 0 ] && grep -q -- '--bs 1000' <<<"$out" && ok "--bs 1000 refused naming --bs" ||
	ko "--bs 1000: $out"
out=$("$SRCDIR/tools/bench/copy" --qd 8,x --build "$T/bab" 2>&1)
[ $? -ne 0 ] && grep -q -- '--qd 8,x' <<<"$out" && ok "--qd 8,x refused naming --qd" ||
	ko "--qd 8,x: $out"
out=$("$SRCDIR/tools/bench/copy" --copy-slots 0 --build "$T/bab" 2>&1)
[ $? -ne 0 ] && grep -q -- '--copy-slots 0' <<<"$out" && ok "--copy-slots 0 refused naming it" ||
	ko "--copy-slots 0: $out"
finish
