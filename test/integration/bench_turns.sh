#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_turns.sh - tools/bench/turns end to end (not a benchmark: a few short turns
# on a 64 MiB device): femud with femu-bench and femu-floor's two QD1 rings
# (at QD8: its copy loop) take the CPUs in turns, the tool prints each side's
# median rate and the per-turn ratios, and its JSON holds every turn with
# medians that follow from them; a second femud (B) adds its own side and
# B/femud; the cache-line round trip taken before each turn is in the JSON with
# the turns split by it; --layouts split,packed adds femu-bench --packed and
# femu-floor's packed rings (femud must serve packed rings), each layout judged
# against its own; --profile gives each side's perf samples in its own slices,
# priced per request (and is refused without a usable perf); bad options are
# refused naming the option.  No performance figure is asserted.
# Args: femu-bench path.  Env: FEMUD, SRCDIR, BUILDDIR.
. "$(dirname "$0")/femu_bench_lib.sh"

FLOOR=$BUILDDIR/tools/bench/femu-floor/femu-floor
[ -x "$FLOOR" ] || { echo "FAIL: femu-floor not built"; exit 1; }
common=(--femud "$FEMUD" --femu-bench "$BENCH" --femu-floor "$FLOOR" --size-mb 64 --slice 0.1
	--settle 0.02 --warmup 1)

timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --turns 4 --json "$T/q.json" >"$T/q.out" 2>"$T/q.err"
RC=$?
cat "$T/q.out"
[ "$RC" -eq 0 ] && ok "tools/bench/turns exit 0" || { ko "tools/bench/turns exit $RC"; cat "$T/q.err"; }
grep -qE '^  median rates: bare ring [0-9.]+[kM]/s, femud [0-9.]+[kM]/s, virtio-layout ring [0-9.]+[kM]/s$' \
	"$T/q.out" && ok "median rates of the three sides" || ko "no median line"
grep -qE '^  femud / bare ring: [0-9.]+% \(quartiles [0-9.]+-[0-9.]+%, >= 90% in [0-4] of 4 turns\); goal >= 90%: (MET|not met)$' \
	"$T/q.out" && ok "femud / bare ring with the goal" || ko "no femud / bare line"
if python3 -c '
import json, statistics, sys
j = json.load(open(sys.argv[1]))
t, s = j["turns"], j["summary"]
assert len(t) == 4 and s["turns"] == 4 and j["qd"] == 1 and j["size_mb"] == 64, j
for x in t:
    assert set(x) == {"bare", "femud", "virtio"} and min(x.values()) > 0, x
for side in ("bare", "femud", "virtio"):
    assert s[side + "_iops"] == statistics.median(x[side] for x in t), side
for ring in ("bare", "virtio"):
    r = [x["femud"] / x[ring] for x in t]
    f = s["femud_over_" + ring]
    assert abs(f["median"] - statistics.median(r)) < 1e-9 and f["n"] == 4, (ring, f, r)
    assert f["q1"] <= f["median"] <= f["q3"], f
    assert ("at_least_goal" in f) == (ring == "bare"), f
assert s["femud_over_bare"]["at_least_goal"] == sum(x["femud"] / x["bare"] >= 0.90 for x in t)
r = j["rtt_ns"]
assert len(r) == 4 and all(10 < x < 100000 for x in r), r
assert s["rtt_ns"]["median"] == statistics.median(r) and s["rtt_ns"]["min"] == min(r), s["rtt_ns"]
c = s["by_rtt"]
assert sum(k["n"] for k in c) == 4 and c[0]["rtt_ns_min"] == min(r), c
for k in c:  # each class: the ratios of its own turns
    mine = [i for i in range(4) if k["rtt_ns_min"] <= r[i] <= k["rtt_ns_max"]]
    assert len(mine) == k["n"], (k, r)
    assert abs(k["femud_over_bare"]["median"] -
               statistics.median(t[i]["femud"] / t[i]["bare"] for i in mine)) < 1e-9, k' "$T/q.json"; then
	ok "json: every turn, medians and ratios that follow from them, round trips and their classes"
else ko "json: $(head -c 600 "$T/q.json")"; fi
grep -qE '^  cache-line round trip before each turn: median [0-9]+ ns \(quartiles [0-9]+-[0-9]+, [0-9]+-[0-9]+\), [1-4] placements?$' \
	"$T/q.out" && ok "round trip line" || ko "no round trip line"

# the placement classes: a round trip over 1.5x the next shorter one starts a class
if PYTHONPATH="$SRCDIR/tools/bench/lib" python3 -c '
from turns import rtt_classes
assert rtt_classes([100, 700, 120, 650, 50]) == [[4], [0, 2], [3, 1]], rtt_classes([100, 700, 120, 650, 50])
assert rtt_classes([130, 140, 150]) == [[0, 1, 2]]
assert rtt_classes([100, 150, 226]) == [[0, 1], [2]]'; then ok "rtt_classes splits at 1.5x gaps"
else ko "rtt_classes"; fi

# QD8: against femu-floor's copy loop and its split ring at QD8
timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --qd 8 --turns 3 --json "$T/c.json" >"$T/c.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && grep -qE '^  femud / copy rate: [0-9.]+% \(quartiles [0-9.]+-[0-9.]+%, >= 85% in [0-3] of 3 turns\); goal >= 85%: (MET|not met)$' "$T/c.out" &&
	grep -qE '^  femud / split ring: [0-9.]+% \(quartiles [0-9.]+-[0-9.]+%, 3 turns\)$' "$T/c.out" &&
	grep -qE '^  split ring / copy rate \(.*\): [0-9.]+% \(quartiles [0-9.]+-[0-9.]+%, >= 85% in [0-3] of 3 turns\)$' "$T/c.out" &&
	python3 -c 'import json, statistics, sys
j = json.load(open(sys.argv[1]))
t, s = j["turns"], j["summary"]
assert j["qd"] == 8 and len(t) == 3 and all(set(x) == {"copy", "femud", "ring"} and min(x.values()) > 0 for x in t), t
for num, den in (("femud", "copy"), ("femud", "ring"), ("ring", "copy")):
    r = s[num + "_over_" + den]
    assert abs(r["median"] - statistics.median(x[num] / x[den] for x in t)) < 1e-9, (num, den, r)
assert s["ring_iops"] == statistics.median(x["ring"] for x in t), s' "$T/c.json" &&
	ok "--qd 8: femud against the copy loop and the split ring" || { ko "--qd 8 (exit $RC)"; cat "$T/c.out"; }
timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --qd 8 --turns 1 --no-ring --json "$T/n.json" >"$T/n.out" 2>&1 &&
	python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["turns"]
assert set(t[0]) == {"copy", "femud"}, t' "$T/n.json" && ! grep -q "split ring" "$T/n.out" &&
	ok "--no-ring: the copy loop only" || { ko "--no-ring"; cat "$T/n.out"; }

# B: the same femud as a second build, a side of its own
timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --turns 2 --b-femud "$FEMUD" --json "$T/b.json" >"$T/b.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && grep -qE '^  B / femud: [0-9.]+ \(quartiles [0-9.]+-[0-9.]+, ahead in [0-2] of 2 turns\)$' "$T/b.out" &&
	grep -qE '^  B / bare ring: ' "$T/b.out" && ok "--b-femud: B's side and B / femud" ||
	{ ko "--b-femud (exit $RC)"; cat "$T/b.out"; }

# --layouts split,packed: femu-bench --packed on a femud of its own, each layout against its
# own femu-floor rings (QD1: the packed QD1 loop; QD8: the packed ring at QD8); femud must
# serve packed rings
for qd in 1 8; do
	timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --qd $qd --turns 2 --layouts split,packed \
		--json "$T/p$qd.json" >"$T/p$qd.out" 2>&1
	RC=$?
	[ "$RC" -eq 0 ] &&
		grep -qE '^  femud packed / femud split: [0-9.]+ \(quartiles [0-9.]+-[0-9.]+, ahead in [0-2] of 2 turns\)$' "$T/p$qd.out" &&
		grep -qE '^  femud packed / packed ring: [0-9.]+% \(quartiles [0-9.]+-[0-9.]+%, 2 turns\)$' "$T/p$qd.out" &&
		python3 - "$T/p$qd.json" "$qd" <<'PY' && ok "--layouts split,packed QD$qd: both layouts, each against its floor" ||
import json, sys
j = json.load(open(sys.argv[1]))
qd = int(sys.argv[2])
t, s = j["turns"], j["summary"]
assert j["layouts"] == ["split", "packed"] and len(t) == 2, j
fl = ("pbare", "bare", "virtio") if qd == 1 else ("pring", "ring", "copy")
assert all(x["packed"] > 0 and x["femud"] > 0 and all(x[f] > 0 for f in fl) for x in t), t
own = "packed_over_pbare" if qd == 1 else "packed_over_pring"
assert own in s and "packed_over_femud" in s, sorted(s)
# the split side is not judged against the packed rings, nor the packed side against split ones
assert "femud_over_pbare" not in s and "femud_over_pring" not in s, sorted(s)
assert "packed_over_bare" not in s and "packed_over_ring" not in s, sorted(s)
PY
		{ ko "--layouts split,packed QD$qd (exit $RC)"; cat "$T/p$qd.out"; }
done

# 512 B reads at QD8: both layouts against femu-floor's rings of 512 B reads, no copy rate
# (one core's copy is of 4 KiB blocks)
timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --qd 8 --bs 512 --turns 2 --layouts split,packed \
	--json "$T/s.json" >"$T/s.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && python3 - "$T/s.json" <<'PY' && ok "--bs 512 QD8: each layout against its ring of 512 B reads" ||
import json, sys
j = json.load(open(sys.argv[1]))
t, s = j["turns"], j["summary"]
assert j["bs"] == "512" and len(t) == 2, j
assert all(set(x) == {"femud", "packed", "ring", "pring"} and min(x.values()) > 0 for x in t), t
assert "femud_over_ring" in s and "packed_over_pring" in s and "pring_over_ring" in s, sorted(s)
PY
	{ ko "--bs 512 QD8 (exit $RC)"; cat "$T/s.out"; }

# --profile: cpuprof gives each sample to the side whose counted slice holds it and to that
# turn's placement, and prices each function per request at the side's median rate there
if PYTHONPATH="$SRCDIR/tools/bench/lib" python3 -c '
from cpuprof import attribute, parse_script
s = parse_script("""  10.000100000:      55d0 pmd_sweep
  10.000200000:  ffff81 clear_page_erms
junk line
  10.500000000:      55d0 [unknown]
  10.700000000:      55d0
""")
assert s == [(10.0001, "pmd_sweep"), (10.0002, "clear_page_erms"), (10.5, "[unknown]"),
             (10.7, "[unknown]")], s
# two turns (placements 0 and 1), sides a and b; the gap 1.30-1.40 is no slice
win = [("a", 0, 1.0, 1.1), ("b", 0, 1.2, 1.3), ("a", 1, 1.4, 1.5), ("b", 1, 1.6, 1.7)]
smp = [(1.05, "f"), (1.06, "f"), (1.07, "g"), (1.08, "f"), (1.25, "h"), (1.35, "f"),
       (0.5, "f"), (1.45, "g"), (1.65, "h"), (1.66, "h"), (1.9, "f")]
turns = [{"a": 1e6, "b": 2e6}, {"a": 4e6, "b": 5e6}]
p = attribute(smp, win, [[0], [1]], turns)
a0, b0, a1 = p[0]["sides"]["a"], p[0]["sides"]["b"], p[1]["sides"]["a"]
assert p[0]["turns"] == [0] and a0["samples"] == 4 and b0["samples"] == 1, p
assert [x["function"] for x in a0["top"]] == ["f", "g"], a0
assert abs(a0["top"][0]["share"] - 0.75) < 1e-12 and abs(a0["ns_per_request"] - 1000) < 1e-9, a0
assert abs(a0["top"][0]["ns_per_request"] - 750) < 1e-9, a0
assert a1["samples"] == 1 and abs(a1["top"][0]["ns_per_request"] - 250) < 1e-9, a1
assert p[1]["sides"]["b"]["samples"] == 2, p
# one class of both turns: the median rate of the two, every counted sample
q = attribute(smp, win, [[0, 1]], turns)[0]["sides"]
assert q["a"]["samples"] == 5 and abs(q["a"]["rate"] - 2.5e6) < 1e-6, q
'; then ok "cpuprof: samples given to slices and placements, ns per request"
else ko "cpuprof attribution"; fi
if perf record -q -e cpu-clock -C 0 -o /dev/null true >/dev/null 2>&1; then
	timeout 300 "$SRCDIR/tools/bench/turns" "${common[@]}" --turns 3 --profile --json "$T/f.json" \
		>"$T/f.out" 2>&1
	RC=$?
	[ "$RC" -eq 0 ] && [ -s "$T/f.perf.data" ] &&
		grep -qE '^  cpu-clock profile of the target CPU \([0-9]+ Hz\), ns per request by function:$' "$T/f.out" &&
		grep -qE '^      femud \([0-9.]+[kM]/s, [0-9]+ ns, [0-9]+ samples\): ' "$T/f.out" &&
		python3 - "$T/f.json" <<'PY' && ok "--profile: each side's functions per placement, from its own slices" ||
import json, sys
j = json.load(open(sys.argv[1]))
t, s = j["turns"], j["summary"]
sl = j["slices"]
assert len(sl) == 3 * 3 and {x[0] for x in sl} == {"bare", "femud", "virtio"}, sl
assert all(x[2] < x[3] for x in sl) and sorted(x[1] for x in sl) == [0, 0, 0, 1, 1, 1, 2, 2, 2], sl
prof = s["profile"]
assert sorted(i for c in prof for i in c["turns"]) == [0, 1, 2], prof
for c in prof:
    assert c["rtt_ns_min"] <= c["rtt_ns_max"], c
    for side, p in c["sides"].items():
        # ~0.1 s slices at 4999 Hz: hundreds of samples each
        assert p["samples"] >= 100 * len(c["turns"]), (side, p["samples"])
        shares = [f["share"] for f in p["top"]]
        assert shares == sorted(shares, reverse=True) and sum(shares) <= 1 + 1e-9, p
        assert len(shares) == 8 or sum(shares) > 1 - 1e-9, p  # under 8 functions: all of them
        assert abs(p["ns_per_request"] - 1e9 / p["rate"]) < 1e-6, p
    # femud's CPU is its poller's: its own code among the top functions
    fns = [f["function"] for f in c["sides"]["femud"]["top"]]
    assert any(f.startswith(("pmd_", "poller", "vq", "fm_")) for f in fns), fns
PY
		{ ko "--profile (exit $RC)"; cat "$T/f.out"; }
else
	ko "--profile: perf cannot sample CPU 0 here (install linux-perf; run as root)"
fi
PERF=$T/no-perf "$SRCDIR/tools/bench/turns" "${common[@]}" --turns 1 --profile --json "$T/g.json" \
	>"$T/g.out" 2>&1
RC=$?
[ $RC -ne 0 ] && grep -qF "turns: --profile: perf not usable" "$T/g.out" && [ ! -e "$T/g.json" ] &&
	ok "--profile without perf: refused before any side starts" || { ko "--profile without perf (exit $RC)"; cat "$T/g.out"; }

bad() { # name needle args...
	local name=$1 needle=$2
	shift 2
	"$SRCDIR/tools/bench/turns" "$@" >"$T/$name.out" 2>&1
	local rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$needle" "$T/$name.out" && ok "$name: exit 2 naming $needle" ||
		{ ko "$name: exit $rc"; cat "$T/$name.out"; }
}
bad no_floor_alone "--no-floor" --no-floor
bad other_bs "--bs" --bs 512
bad odd_bs "--bs" --qd 8 --bs 768
bad same_cpus "--bench-cpu" --target-cpu 1 --bench-cpu 1
bad short_slice "--slice" --slice 0.01
bad zero_turns "--turns" --turns 0
bad ring_qd_too_deep "--no-ring" --qd 300
bad packed_alone "--layouts" --layouts packed
bad layouts_word "--layouts" --layouts split,hexagonal
finish
