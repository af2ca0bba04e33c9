#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_figures.sh - tools/bench/sweep's figures table, rendered from a small
# JSON (--from-json: no run, nothing started) into a scratch document with the
# figures markers (--update-docs): the header and every cell, the text around
# the markers kept, a second update changes nothing, a file without markers is
# refused (exit 2) and left as it was, a JSON that is not a sweep's is refused.
# The floor goals judged in turns follow the table as one sentence; a
# tools/bench/layouts JSON adds a packed column, the packed floor and packed/split;
# a file with the workloads markers gets every workload of every target and the floor;
# a run whose rates swung by more than 1.5x within it keeps the docs as they were.
# Args: none.  Env: SRCDIR.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SWEEP=$SRCDIR/tools/bench/sweep
T=$(mktemp -d /tmp/bench-figures.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

# two targets and the floor; cells missing where a target has no such run
cat >"$T/small.json" <<'JSON'
{"rounds": 1, "time_s": 1, "ramp_s": 0.2, "pollers": 1, "queues": 1, "size_mb": 64,
 "targets": ["femud", "qsd-null"], "load_before": "load 0.10/0.10/0.10",
 "load_after": "load 0.20/0.20/0.20", "goal_met": false, "goal": ["goal line kept"],
 "failures": [], "initiator_selftest": null,
 "machine_floor": {"cpus": [0, 1], "size_mb": 64, "rtt_ns": 120, "dram_ns": 90,
   "copy4k_ns": 600, "copy4k_per_s": 2880000, "ring_qd1_4k_ns": 800,
   "ring_qd1_4k_max_iops": 1250000, "cpu_lost_pct": [1.0, 2.0]},
 "floor_turns": {"randread 4k QD1": {"femud_over_bare": {"median": 0.9227}},
                 "randread 4k QD32": {"femud_over_copy": {"median": 0.99338}}},
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
# the table, a blank line, the turns sentence (wrapped)
blank = body.index("")
table, sentence = body[:blank], " ".join(body[blank + 1:])
assert all(l.startswith("|") and l.endswith("|") for l in table), table
rows = [[c.strip() for c in l[1:-1].split("|")] for l in table]
assert rows[0] == ["randread, IOPS", "femud", "qsd null-co", "floor"], rows[0]
assert rows[1] == ["---"] * 4, rows[1]
want = {
    "4 KiB QD1": ["737k", "241k", "1.25M (bare split ring)"],
    "4 KiB QD1, mean latency": ["1.30 us", "4.05 us", "0.80 us"],
    "4 KiB QD32": ["2.62M", "1.81M", "2.88M (one core's copy rate)"],
    "4 KiB QD128": ["2.49M", "-", "2.88M (one core's copy rate)"],
    "512 B QD128": ["4.30M", "-", ""],
}
got = {r[0]: r[1:] for r in rows[2:]}
assert got == want and len(rows) == 2 + len(want), got
assert sentence == ("Floor goals in turns of one run: 4 KiB QD1 at 92.3% of the bare split "
                    "ring (goal 90%), QD32 at 99.3% of one core's copy rate (goal 85%)."), sentence
PY
then ok "figures table: header, every cell, the turns sentence, the text around it"
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
# tools/bench/layouts' JSON: femud's split and packed rings, the packed floor in a column of
# its own (at 512 B each layout's ring from the turns), packed/split per workload from the
# turns in a sentence
python3 - "$T/small.json" "$T/layouts.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.update(kind="layouts", targets=["femud", "femud-packed"], floor_turns={}, goal=["layouts goal"])
for wn in ("randread 4k QD1", "randread 4k QD32", "randread 4k QD128", "randread 512 QD128"):
    v = j["median"].get("femud|" + wn, {"iops": 1000000})
    j["median"]["femud|" + wn] = {"iops": v["iops"], "lat_mean_us": None, "target_cpu_us_per_io": None}
    j["median"]["femud-packed|" + wn] = {"iops": v["iops"] * 1.1, "lat_mean_us": None,
                                         "target_cpu_us_per_io": None}
j["median"] = {k: v for k, v in j["median"].items() if not k.startswith("qsd")}
j["machine_floor"].update(packed_ring_qd1_4k_ns=700, packed_ring_qd1_4k_max_iops=1428571,
                          packed_ring_qd32_4k_per_s=2700000, packed_ring_qd128_4k_per_s=2750000)
j["layout_turns"] = {"randread 4k QD1": {"packed_over_femud": {"median": 1.031}},
                     "randread 512 QD128": {"packed_over_femud": {"median": 1.064},
                                            "ring_iops": 9870000, "pring_iops": 8760000}}
json.dump(j, open(sys.argv[2], "w"))
PY
printf '<!-- figures:begin -->\n<!-- figures:end -->\n' >"$T/layouts.md"
"$SWEEP" --from-json "$T/layouts.json" --update-docs "$T/layouts.md" >"$T/l.out" 2>&1
RC=$?
if [ "$RC" -eq 0 ] && ! grep -q 'selftest-peer failed' "$T/l.out" && python3 - "$T/layouts.md" <<'PY'
import sys
body = open(sys.argv[1]).read().split("\n")[1:-2]
blank = body.index("")
table, sentence = body[:blank], " ".join(body[blank + 1:])
rows = [[c.strip() for c in l[1:-1].split("|")] for l in table]
assert rows[0] == ["randread, IOPS", "femud", "femud, packed rings", "floor", "packed floor"], rows[0]
got = {r[0]: r[1:] for r in rows[2:]}
assert got["4 KiB QD1"] == ["737k", "811k", "1.25M (bare split ring)", "1.43M (bare packed ring)"], got
assert got["4 KiB QD1, mean latency"] == ["-", "-", "0.80 us", "0.70 us"], got
assert got["4 KiB QD32"] == ["2.62M", "2.88M", "2.88M (one core's copy rate)", "2.70M (bare packed ring)"], got
# 512 B: femu-floor's JSON has no floor; the layouts' turns had each layout's ring of 512 B reads
assert got["512 B QD128"] == ["4.30M", "4.73M", "9.87M (bare split ring)", "8.76M (bare packed ring)"], got
assert sentence == ("Packed over split rings in turns of one run (median of the turns' ratios): "
                    "4 KiB QD1 1.03x, 512 B QD128 1.06x."), sentence
PY
then ok "layouts JSON: a packed column, the packed floor, packed/split in a sentence"
else ko "layouts figures (exit $RC): $(cat "$T/l.out" "$T/layouts.md")"; fi

# the workloads block (performance.md): every workload of every target, the run's floor
printf 'a\n<!-- figures:begin -->\n<!-- figures:end -->\nb\n<!-- workloads:begin -->\nold\n<!-- workloads:end -->\nc\n' >"$T/w.md"
if "$SWEEP" --from-json "$T/small.json" --update-docs "$T/w.md" >/dev/null 2>&1 && python3 - "$T/w.md" <<'PY'
import sys
text = open(sys.argv[1]).read()
a, b = text.index("<!-- workloads:begin -->\n"), text.index("<!-- workloads:end -->")
assert text.endswith("<!-- workloads:end -->\nc\n") and "old" not in text, text
body = text[a:b].split("\n")[1:-1]
rows = [[c.strip() for c in l[1:-1].split("|")] for l in body if l.startswith("|")]
assert rows[0] == ["workload", "femud", "qsd null-co"], rows[0]
got = {r[0]: r[1:] for r in rows[2:]}
assert got == {"randread 512 B QD128": ["4.30M, 29.9 us, 0.20", "-"],
               "randread 4 KiB QD1": ["737k, 1.3 us, 1.30", "241k, 4.0 us, 3.40"],
               "randread 4 KiB QD32": ["2.62M, 12.2 us, 0.40", "1.81M, 17.8 us, 0.50"],
               "randread 4 KiB QD128": ["2.49M, 51.8 us, 0.40", "-"]}, got
para = " ".join(body[body.index("", 3) + 1:])
assert para.startswith("The floor of that run (`femu-floor`, same CPUs, a 64 MiB buffer): "
                       "cache-line round trip between the two CPUs 120 ns, random DRAM load "
                       "90 ns, a random 4 KiB copy 600 ns one at a time and 2.88M/s overlapped; "
                       "a bare split-ring backend 1.25M/s at 4 KiB QD1; 1.0-2.0% of each CPU "
                       "taken by the host."), para
assert body[0].startswith("Every workload of the same run"), body[0]
PY
then ok "workloads block: every workload of every target and the run's floor"
else ko "workloads block: $(cat "$T/w.md")"; fi

# a run whose per-second rates swung by more than 1.5x (the VM changed placement mid-run):
# the docs are left alone (exit 2) unless --docs-despite-swings; a steady run is no bar
python3 - "$T/small.json" "$T/swung.json" "$T/steady.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["runs"] = {"femud|randread 4k QD1": [{"iops_per_s": [740000, 735000, 380000, 372000]}]}
json.dump(j, open(sys.argv[2], "w"))
j["runs"] = {"femud|randread 4k QD1": [{"iops_per_s": [740000, 735000, 600000, 0]}]}
json.dump(j, open(sys.argv[3], "w"))
PY
printf '<!-- figures:begin -->\nold\n<!-- figures:end -->\n' >"$T/sw.md"
cp "$T/sw.md" "$T/sw0.md"
"$SWEEP" --from-json "$T/swung.json" --update-docs "$T/sw.md" >"$T/sw.out" 2>&1
RC=$?
[ "$RC" -eq 2 ] && grep -q 'femud|randread 4k QD1 (1.99x)' "$T/sw.out" && cmp -s "$T/sw.md" "$T/sw0.md" &&
	ok "a run that swung 1.99x: exit 2, the figures left as they were" ||
	ko "swung run: exit $RC, $(cat "$T/sw.out")"
"$SWEEP" --from-json "$T/swung.json" --update-docs "$T/sw.md" --docs-despite-swings >"$T/sw.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && grep -q '737k' "$T/sw.md" && ok "--docs-despite-swings writes them" ||
	ko "--docs-despite-swings: exit $RC, $(cat "$T/sw.out")"
"$SWEEP" --from-json "$T/steady.json" --update-docs "$T/sw0.md" >"$T/sw.out" 2>&1
RC=$?
[ "$RC" -eq 0 ] && ! grep -q 'swung' "$T/sw.out" && grep -q '737k' "$T/sw0.md" &&
	ok "a run within 1.5x (a zero second ignored) updates the docs" ||
	ko "steady run: exit $RC, $(cat "$T/sw.out")"

# a swung run is measured again (--swing-retries) and the steadiest attempt kept; a failed
# attempt ends the retries with its failure
if python3 - "$SWEEP" >"$T/retry.out" 2>&1 <<'PY'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("sweep", sys.argv[1])
spec = importlib.util.spec_from_loader("sweep", loader)
sweep = importlib.util.module_from_spec(spec)
loader.exec_module(sweep)

def runs(*attempts):
    it = iter(attempts)
    return lambda: next(it)

swung = (0, {"iops_per_s": [700, 300, 700]}, "")
less = (0, {"iops_per_s": [700, 400, 700]}, "")
steady = (0, {"iops_per_s": [700, 690, 700]}, "")
retried = []
rc, j, _ = sweep.steady_run(runs(swung, steady, swung), 2, retried.append)
assert (rc, j["iops_per_s"], j["attempts"], retried) == (0, [700, 690, 700], 2, [1]), (j, retried)
rc, j, _ = sweep.steady_run(runs(swung, less, swung), 2)
assert j["iops_per_s"] == [700, 400, 700] and j["attempts"] == 3, j
rc, j, _ = sweep.steady_run(runs(swung, swung), 0)
assert j["attempts"] == 1, j
rc, j, err = sweep.steady_run(runs(swung, (1, None, "refused")), 2)
assert (rc, j, err) == (1, None, "refused"), (rc, j, err)
rc, j, _ = sweep.steady_run(runs(steady), 2)
assert j["attempts"] == 1, j
print("ok")
PY
then ok "a swung run measured again: the steadiest of the attempts kept, a failure ends them"
else ko "steady_run: $(cat "$T/retry.out")"; fi

echo '{"rounds": 1}' >"$T/bad.json"
"$SWEEP" --from-json "$T/bad.json" >"$T/bad.out" 2>&1
RC=$?
[ "$RC" -eq 2 ] && grep -q 'not a sweep result' "$T/bad.out" && ok "--from-json of another JSON: exit 2" ||
	ko "bad JSON: exit $RC, $(cat "$T/bad.out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
