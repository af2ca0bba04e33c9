# SPDX-License-Identifier: GPL-2.0-or-later
"""bench_chart.py - draw a tools/bench/sweep JSON result (python3-matplotlib, no display needed).

  python3 tools/bench/lib/bench_chart.py RESULT.json [OUT_PREFIX]

Writes OUT_PREFIX-iops.{png,svg}: randread IOPS by queue depth, one line per target, one
panel per block size, with the machine floor of the same run (femu-floor: the random 4 KiB
copy rate of one core and the bare split-ring QD1 rate drawn across the 4 KiB panel, the bare
split-ring QD32/QD128 rates as points); and
OUT_PREFIX-qd1-latency.{png,svg}: the distribution of 4 KiB randread QD1 latency per target
(percentile by latency).  OUT_PREFIX defaults to RESULT without .json.  Prints the files.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchlib import RING_FLOOR_QDS, ring_floor_key  # noqa: E402

COLORS = {"femud": "#d62728", "femud-packed": "#ff7f0e", "qsd-null": "#1f77b4",
          "qsd-shm": "#2ca02c", "dpdk-ex": "#9467bd"}


def parse_name(wn):
    """'randread 4k QD32' -> ('randread', '4k', 32)."""
    rw, bs, qd = wn.split()
    return rw, bs, int(qd[2:])


def subtitle(res):
    return (f"{res.get('date', '')}, {res.get('size_mb', '?')} MiB devices, "
            f"{res.get('rounds')} rounds x ({res.get('ramp_s', 0):g} s ramp + "
            f"{res.get('time_s'):g} s), {res.get('load_before', '')}")


def save(fig, res, path_stem):
    """Title, layout, PNG and SVG; returns the files written."""
    fig.suptitle("tools/bench/sweep:\n" + subtitle(res), fontsize=8)
    fig.tight_layout()
    out = []
    for ext in ("png", "svg"):
        fig.savefig(f"{path_stem}.{ext}", dpi=110)
        out.append(f"{path_stem}.{ext}")
    plt.close(fig)
    return out


def iops_chart(res, prefix):
    med = res["median"]
    sizes = []
    for key in med:
        _, wn = key.split("|")
        rw, bs, _ = parse_name(wn)
        if rw == "randread" and bs not in sizes:
            sizes.append(bs)
    sizes.sort(key=lambda b: 512 if b == "512" else int(b[:-1]) * 1024)
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    fl = res.get("machine_floor")
    for ax, bs in zip(axes[0], sizes):
        for tn in res["targets"]:
            pts = []
            for key, v in med.items():
                t, wn = key.split("|")
                rw, b, qd = parse_name(wn)
                if t == tn and rw == "randread" and b == bs and v.get("iops"):
                    pts.append((qd, v["iops"] / 1e6))
            if pts:
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=tn,
                        color=COLORS.get(tn))
        if fl and bs == "4k":
            ax.axhline(fl["copy4k_per_s"] / 1e6, ls="--", color="gray",
                       label="floor: one core's random 4 KiB copy rate")
            ax.axhline(fl["ring_qd1_4k_max_iops"] / 1e6, ls=":", color="gray",
                       label="floor: bare split ring, QD1")
            ring = [(qd, fl[ring_floor_key(qd)] / 1e6) for qd in RING_FLOOR_QDS
                    if ring_floor_key(qd) in fl]
            if ring:
                ax.plot([p[0] for p in ring], [p[1] for p in ring], ls="none", marker="x",
                        color="gray", label="floor: bare split ring, QD32/QD128")
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 32, 128])
        ax.set_xticklabels(["1", "32", "128"])
        ax.set_xlabel("queue depth (one queue)")
        ax.set_ylabel("IOPS (millions, " + ("steady state)" if res.get("ramp_s") else
                                            "mean of each run)"))
        ax.set_title(f"randread {bs}")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save(fig, res, f"{prefix}-iops")


def latency_chart(res, prefix):
    med = res["median"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for tn in res["targets"]:
        v = med.get(f"{tn}|randread 4k QD1")
        cdf = v and v.get("lat_cdf_us")
        if not cdf:
            continue
        ax.plot([p[1] for p in cdf], [p[0] for p in cdf], marker=".", label=tn,
                color=COLORS.get(tn))
        drawn = True
    if not drawn:
        plt.close(fig)
        return []
    ax.set_xscale("log")
    ax.set_xlabel("latency (us, log scale)")
    ax.set_ylabel("percentile")
    ax.set_title("randread 4 KiB QD1 latency distribution (median round)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save(fig, res, f"{prefix}-qd1-latency")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        res = json.load(f)
    prefix = argv[2] if len(argv) > 2 else os.path.splitext(argv[1])[0]
    for p in iops_chart(res, prefix) + latency_chart(res, prefix):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
