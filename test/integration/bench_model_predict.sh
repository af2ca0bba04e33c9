#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_model_predict.sh - tools/bench/model's predictions (what its table
# compares femud against) equal the figures of device-model.md for the
# tutorial's device, recomputed here from the formulas: flat, TLC page
# tables, channel bus, host link, firmware; QD32 bounds; the closed-loop
# QD32 figure lies below the bound and above FEMU's measured 88%.
# Starts nothing (--predict-only).  Args: none.  Env: SRCDIR.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
J=$(mktemp /tmp/bench-model-pred.XXXXXX.json)
trap 'rm -f "$J"' EXIT
"$SRCDIR/tools/bench/model" --predict-only --json "$J" >/dev/null 2>&1 ||
	{ echo "not ok - bench-model --predict-only failed"; exit 1; }
python3 - "$J" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
fails = 0
def check(name, got, want, tol=0.01):
    global fails
    ok = abs(got - want) <= tol * max(1.0, abs(want))
    print(f"{'ok' if ok else 'not ok'} - {name}: {got:.3f} (formula {want:.3f})")
    fails += not ok
us = 1.0
link4k, link128k = 4096 / 1000e6 * 1e6, 131072 / 1000e6 * 1e6   # bytes / (MB/s), us
want = {  # config: (rd4k, rd128k, wr4k, qd32 bound)
    "baseline": (40, 4 * 40, 200, 8 / 40e-6),
    "flat-80/400": (80, 4 * 80, 400, 8 / 80e-6),
    "tlc": (77.5, 4 * 79.375, 2225, None),
    "bus-20us": (40 + 20, 16 * 20 + 40, 200 + 20, 2 / 20e-6),
    "link-1000MBps": (40 + link4k, 160 + link128k, 200 + link4k, 8 / 40e-6),
    "fw-20us": (40 + 20, 160 + 20, 200 + 20, 1 / 20e-6),
}
for cfg, (rd4k, rd128k, wr4k, bound) in want.items():
    p = j[cfg]["prediction"]
    check(f"{cfg} 4 KiB read", p["rd4k"], rd4k)
    if cfg != "tlc":  # TLC 128 KiB: mixed page types, checked only for its range below
        check(f"{cfg} 128 KiB read", p["rd128k"], rd128k)
    check(f"{cfg} 4 KiB write", p["wr4k"], wr4k)
    if bound:
        check(f"{cfg} QD32 bound", p["qd32_bound"], bound)
    cl = p["qd32_model"]
    # random LUNs leave a LUN idle part of the time: where the LUNs are the only limit the
    # model lands near FEMU's measured 88%; elsewhere it is only below the bound
    lo = 0.85 if cfg in ("baseline", "flat-80/400") else 0.5
    hi = 0.92 if cfg in ("baseline", "flat-80/400") else 1.0001
    ok = lo * p["qd32_bound"] <= cl <= hi * p["qd32_bound"]
    print(f"{'ok' if ok else 'not ok'} - {cfg} closed-loop {cl:.0f} = "
          f"{100 * cl / p['qd32_bound']:.1f}% of the bound (expected {100 * lo:.0f}-{100 * hi:.0f}%)")
    fails += not ok
tlc = j["tlc"]["prediction"]
check("tlc 4 KiB read p99 (upper page)", tlc["rd4k_p99"], 106)
ok = 4 * 77.5 <= tlc["rd128k"] <= 4 * 106
print(f"{'ok' if ok else 'not ok'} - tlc 128 KiB read {tlc['rd128k']} between 4 centre and 4 upper pages")
fails += not ok
print("all passed" if fails == 0 else f"{fails} failed")
sys.exit(1 if fails else 0)
PY
