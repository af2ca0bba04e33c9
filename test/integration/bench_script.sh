#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_script.sh - tools/bench/sweep runs end to end (not a benchmark: one tiny
# round against femud and, when installed, qemu-storage-daemon): exit 0, a
# row per workload with figures, ratios, the goal lines and a JSON file with
# the medians, each run's per-second rates and steady state, the machine floor
# and its goal lines, and (with Debian's python3-matplotlib) the charts; with
# femud-packed, the packed rounds, the layouts' turns and the packed floor.  No
# performance figure is asserted.  Its figures table: bench_figures.sh.
# Args: femu-bench path.  Env: FEMUD, SRCDIR.
. "$(dirname "$0")/femu_bench_lib.sh"
SWEEP=$SRCDIR/tools/bench/sweep

targets=femud
command -v qemu-storage-daemon >/dev/null && targets=femud,qsd-null
chart=
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && chart=--chart
timeout 300 "$SWEEP" --rounds 1 --time 1 --ramp 0.2 --size-mb 64 --targets "$targets" --qd1-pairs 2 --qd1-turns 3 --copy-turns 2 \
	--femud "$FEMUD" --femu-bench "$BENCH" --json "$T/b.json" $chart --chart-dir "$T" >"$T/b.out" 2>"$T/b.err"
RC=$?
cat "$T/b.out"
[ "$RC" -eq 0 ] && ok "tools/bench/sweep exit 0" || { ko "tools/bench/sweep exit $RC"; cat "$T/b.err"; }
rows=$(grep -cE '^(randread|randwrite) [0-9k]+ QD[0-9]+ +[0-9.]+[kM] ' "$T/b.out")
[ "$rows" -eq 7 ] && ok "7 workload rows with femud figures" || ko "rows: $rows"
grep -q "^initiator: femu-bench --selftest-peer drove" "$T/b.out" && ok "initiator line" ||
	ko "initiator line missing"
grep -q '^goal randread 4k QD1: ' "$T/b.out" && grep -q '^goal: ' "$T/b.out" && ok "goal lines" ||
	ko "goal lines missing"
if [ "$targets" = femud,qsd-null ]; then
	grep -q 'femud/qsd-null' "$T/b.out" && ok "ratio column" || ko "no ratio column"
fi
if python3 -c '
import json,statistics,sys
j=json.load(open(sys.argv[1]))
m=j["median"]["femud|randread 4k QD1"]
assert m["iops"]>0 and m["lat_mean_us"]>0 and m["rounds"]==1, m
assert j["failures"]==[], j["failures"]
r=j["runs"]["femud|randread 4k QD32"][0]
assert r["ramp_s"]==0.2 and len(r["iops_per_s"])>=1 and r["steady_iops"]>0, r
fl=j["machine_floor"]
# femu-floor gives up when the host keeps a CPU away for seconds (heavy load): then bench says so
assert fl is None or (fl["copy4k_per_s"]>0 and fl["rounds"]==1), fl
assert len(m["lat_cdf_us"])>10
# QD1 pairs: femud QD1 between two bare ring QD1 samples, 2 per round (none when femu-floor
# gave up); judged on the steady pairs (ring before and after within 10%) when there are any
q, ps = j["qd1_paired"], j["qd1_pairs"]
assert (q is None) == (ps == []), (q, ps)
if q:
    assert len(ps) == 1 and ps[0]["round"] == 0 and 1 <= len(ps[0]["pairs"]) <= 2, ps
    for p in ps[0]["pairs"]:
        a, b = p["ring_iops_before"], p["ring_iops_after"]
        assert p["iops"] > 0 and min(a, b) > 0, p
        assert min(a, b) - 1 <= p["ring_iops"] <= max(a, b) + 1, p
        assert p["steady"] == (abs(a - b) <= 0.10 * max(a, b)), p
        assert abs(p["ratio"] - p["iops"] / p["ring_iops"]) < 0.01 * p["ratio"], p
    assert q["pairs"] == len(ps[0]["pairs"]) and q["rounds"] == 1, q
    steady = [p for p in ps[0]["pairs"] if p["steady"]]
    assert q["steady_pairs"] == len(steady), q
    assert q["judged_on"] == ("steady" if steady else "all"), q
    rs = sorted(p["ratio"] for p in (steady or ps[0]["pairs"]))
    assert rs[0] <= q["ratio_median"] <= rs[-1], q
    assert any(l.startswith("floor goal randread 4k QD1, pairs: femud ") and " pair" in l
               for l in j["goal"]), j["goal"]
# floor turns after the rounds: QD1 against the two rings (3 turns), QD32 and QD128 against
# the copy loop and the split ring at the same depth (2 turns each); each goal line judges on the median of its per-turn ratios
ft = j["floor_turns"]
assert set(ft) == {"randread 4k QD1", "randread 4k QD32", "randread 4k QD128"}, ft.keys()
for wn, n, fl, sides, need in (("randread 4k QD1", 3, "bare", {"bare", "femud", "virtio"}, 0.90),
                               ("randread 4k QD32", 2, "copy", {"copy", "femud", "ring"}, 0.85),
                               ("randread 4k QD128", 2, "copy", {"copy", "femud", "ring"}, 0.85)):
    t = ft[wn]
    assert len(t["per_turn"]) == n and t["turns"] == n, t
    assert len(t["per_turn_rtt_ns"]) == n and all(10 < x < 1e5 for x in t["per_turn_rtt_ns"]), t
    assert t["rtt_ns"]["median"] == statistics.median(t["per_turn_rtt_ns"]), t
    for x in t["per_turn"]:
        assert set(x) == sides and min(x.values()) > 0, x
    rs = sorted(x["femud"] / x[fl] for x in t["per_turn"])
    med = rs[1] if n == 3 else (rs[0] + rs[1]) / 2
    assert abs(t["femud_over_" + fl]["median"] - med) < 1e-9, (t, rs)
    line = [l for l in j["goal"] if l.startswith(f"floor goal {wn}: femud ")]
    assert len(line) == 1 and "turns of one run" in line[0], j["goal"]
    assert line[0].endswith(": MET") == (med >= need), line
    if fl == "copy":  # the split ring at the same depth: its share of the copy rate
        rr = sorted(x["ring"] / x["copy"] for x in t["per_turn"])
        assert abs(t["ring_over_copy"]["median"] - (rr[0] + rr[1]) / 2) < 1e-9, (t, rr)
        share = "which itself did %.1f%% of the copy rate" % (100 * t["ring_over_copy"]["median"])
        assert share in line[0], (share, line)
    if wn != "randread 4k QD1":
        assert any(l.startswith(f"floor goal {wn}, separate runs: femud ") for l in j["goal"]) \
            or j["machine_floor"] is None, j["goal"]
' "$T/b.json"; then ok "json medians, per-second rates, floor, QD1 pairs, floor turns"
else ko "json: $(head -c 600 "$T/b.json")"; fi
grep -qE '^(floor goal randread 4k QD32: femud |floor goals: no machine floor)' "$T/b.out" &&
	ok "floor goal lines" || ko "floor goal lines missing"
# femud-packed: femu-bench --packed rounds, then tools/bench/layouts' turns (above QD1 with
# femu-bench's own peer on each layout) and the packed ring's floor in the same JSON; its
# figures table gets the packed column and floor
timeout 300 "$SWEEP" --rounds 1 --time 1 --ramp 0.2 --size-mb 64 --targets femud,femud-packed \
	--workloads 'randread 4k QD1,randread 512 QD128' --qd1-pairs 0 --qd1-turns 0 --copy-turns 0 \
	--layout-turns 2 --femud "$FEMUD" --femu-bench "$BENCH" --json "$T/p.json" >"$T/p.out" 2>"$T/p.err"
RC=$?
[ "$RC" -eq 0 ] && ok "sweep with femud-packed: exit 0" || { ko "femud-packed exit $RC"; cat "$T/p.err"; }
grep -q 'femud/femud-packed' "$T/p.out" && ok "femud/femud-packed ratio column" ||
	ko "no femud-packed column: $(head -c 600 "$T/p.out")"
printf '<!-- figures:begin -->\n<!-- figures:end -->\n' >"$T/doc.md"
if python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
assert j["failures"]==[], j["failures"]
for wn in ("randread 4k QD1", "randread 512 QD128"):
    assert j["median"]["femud-packed|" + wn]["iops"] > 0, wn
    lt = j["layout_turns"][wn]
    assert len(lt["per_turn"]) == 2 and all(x["packed"] > 0 and x["femud"] > 0
                                            for x in lt["per_turn"]), lt
    assert lt["packed_over_femud"]["median"] > 0, lt
# above QD1 femu-bench against its own peer on each layout is a side of the turns too
deep = j["layout_turns"]["randread 512 QD128"]
assert all(x["peer"] > 0 and x["ppeer"] > 0 for x in deep["per_turn"]), deep["per_turn"]
assert {"ppeer_over_peer", "ppeer_over_femud", "femud_over_peer",
        "packed_over_ppeer"} <= set(deep), sorted(deep)
assert "peer" not in j["layout_turns"]["randread 4k QD1"]["per_turn"][0], "QD1 has no peer"
fl = j["machine_floor"]
assert fl is None or fl["packed_ring_qd1_4k_max_iops"] > 0, fl
' "$T/p.json" && "$SWEEP" --from-json "$T/p.json" --update-docs "$T/doc.md" >/dev/null &&
	grep -q '^| randread, IOPS | femud | femud, packed rings | floor | packed floor |$' "$T/doc.md" &&
	grep -q '^Packed over split rings in turns of one run' "$T/doc.md"; then
	ok "femud-packed medians, layout turns, packed floor, figures table"
else ko "femud-packed json or table: $(head -c 800 "$T/doc.md")"; fi
if [ -n "$chart" ]; then
	[ -s "$T/b-iops.png" ] && [ -s "$T/b-iops.svg" ] && [ -s "$T/b-qd1-latency.png" ] &&
		ok "charts drawn" || ko "charts missing: $(ls "$T")"
fi
finish
