#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_script.sh - tools/bench/sweep: first its figures table, rendered from a
# small JSON (--from-json, no run) into a scratch copy of a document with the
# figures markers (--update-docs): every cell, the text around it kept, a second
# update the same, a file without markers refused and left as it was; then one
# tiny run end to end (not a benchmark) against femud and, when installed,
# qemu-storage-daemon: exit 0, a row per workload with figures, ratios, the goal
# lines and a JSON file with the medians, each run's per-second rates and steady
# state, the machine floor and its goal lines, and (with Debian's
# python3-matplotlib) the charts.  No performance figure is asserted.
# Args: femu-bench path.  Env: FEMUD, SRCDIR.
. "$(dirname "$0")/femu_bench_lib.sh"
SWEEP=$SRCDIR/tools/bench/sweep

# -- the figures table from a small JSON: two targets, the floor, one cell missing
cat >"$T/small.json" <<'JSON'
{"rounds": 1, "time_s": 1, "ramp_s": 0.2, "pollers": 1, "queues": 1, "size_mb": 64,
 "targets": ["femud", "qsd-null"], "load_before": "load 0.10/0.10/0.10",
 "load_after": "load 0.20/0.20/0.20", "goal_met": false, "goal": ["goal line kept"],
 "failures": [], "initiator_selftest": null,
 "machine_floor": {"cpus": [0, 1], "size_mb": 64, "rtt_ns": 120, "dram_ns": 90,
   "copy4k_ns": 600, "copy4k_per_s": 2880000, "ring_qd1_4k_ns": 800,
   "ring_qd1_4k_max_iops": 1250000, "cpu_lost_pct": [1.0, 2.0]},
 "median": {
  "femud|randread 4k QD1": {"iops": 737400, "lat_mean_us": 1.3035, "target_cpu_us_per_io": 1.3},
  "femud|randread 4k QD32": {"iops": 2620000, "lat_mean_us": 12.2, "target_cpu_us_per_io": 0.4},
  "femud|randread 4k QD128": {"iops": 2490000, "lat_mean_us": 51.8, "target_cpu_us_per_io": 0.4},
  "femud|randread 512 QD128": {"iops": 4300000, "lat_mean_us": 29.9, "target_cpu_us_per_io": 0.2},
  "qsd-null|randread 4k QD1": {"iops": 240800, "lat_mean_us": 4.05, "target_cpu_us_per_io": 3.4},
  "qsd-null|randread 4k QD32": {"iops": 1810000, "lat_mean_us": 17.8, "target_cpu_us_per_io": 0.5}
 }}
JSON
printf 'intro line\n<!-- figures:begin -->\nold figures\n<!-- figures:end -->\nlast line\n' >"$T/doc.md"
printf 'no markers here\n' >"$T/plain.md"
"$SWEEP" --from-json "$T/small.json" --update-docs "$T/doc.md" >"$T/t.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && ok "--from-json --update-docs exit 0" || { ko "--update-docs exit $RC"; cat "$T/t.out"; }
grep -q '^goal line kept$' "$T/t.out" && grep -q '^randread 4k QD1 .*737.4k' "$T/t.out" &&
	ok "--from-json prints the report of the JSON" || ko "report: $(head -c 600 "$T/t.out")"
if python3 - "$T/doc.md" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[0] == "intro line" and lines[1] == "<!-- figures:begin -->", lines
assert lines[-3:] == ["<!-- figures:end -->", "last line", ""], lines
body = lines[2:-3]
assert "old figures" not in body, body
rows = [[c.strip() for c in l.strip("|").split("|")] for l in body]
assert rows[0] == ["figure", "femud", "qemu-storage-daemon (null-co)", "machine floor"], rows[0]
assert rows[1] == ["---", "---:", "---:", "---:"], rows[1]
want = {
    "4 KiB randread QD1, IOPS": ["737.4k", "240.8k", "1.25M (bare split ring)"],
    "4 KiB randread QD1, mean latency": ["1.30 us", "4.05 us", "0.80 us (bare split ring)"],
    "4 KiB randread QD32, IOPS": ["2.62M", "1.81M", "2.88M (copy rate)"],
    "4 KiB randread QD128, IOPS": ["2.49M", "-", "2.88M (copy rate)"],
    "512 B randread QD128, IOPS": ["4.30M", "-", "-"],
}
got = {r[0]: r[1:] for r in rows[2:]}
assert got == want and len(rows) == 2 + len(want), got
PY
then ok "figures table: header, every cell, the text around it"
else ko "figures table: $(cat "$T/doc.md")"; fi
cp "$T/doc.md" "$T/doc1.md"
"$SWEEP" --from-json "$T/small.json" --update-docs "$T/doc.md" >/dev/null 2>&1 &&
	cmp -s "$T/doc.md" "$T/doc1.md" && ok "a second --update-docs changes nothing" ||
	ko "second --update-docs differs: $(diff "$T/doc1.md" "$T/doc.md")"
"$SWEEP" --from-json "$T/small.json" --update-docs "$T/plain.md" >"$T/p.out" 2>&1
RC=$?
[ "$RC" -eq 2 ] && grep -q 'no <!-- figures:begin -->' "$T/p.out" &&
	[ "$(cat "$T/plain.md")" = "no markers here" ] && ok "a file without markers: exit 2, unchanged" ||
	ko "no markers: exit $RC, $(cat "$T/p.out")"
echo '{"rounds": 1}' >"$T/bad.json"
"$SWEEP" --from-json "$T/bad.json" >"$T/bad.out" 2>&1
RC=$?
[ "$RC" -eq 2 ] && grep -q 'not a sweep result' "$T/bad.out" && ok "--from-json of another JSON: exit 2" ||
	ko "bad JSON: exit $RC, $(cat "$T/bad.out")"

# -- one tiny run end to end
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
if [ -n "$chart" ]; then
	[ -s "$T/b-iops.png" ] && [ -s "$T/b-iops.svg" ] && [ -s "$T/b-qd1-latency.png" ] &&
		ok "charts drawn" || ko "charts missing: $(ls "$T")"
fi
finish
