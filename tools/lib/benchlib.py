# SPDX-License-Identifier: GPL-2.0-or-later
"""benchlib - what the Python benchmark scripts in tools/ share: finding the built
binaries, starting and stopping femud, running femu-bench and femu-floor, the steady-state
figure of a run, and the machine's load (printed with every figure: on a shared machine
figures are only comparable within one run).
"""
import glob
import json
import os
import signal
import statistics
import subprocess
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_exe(explicit, env, rel, top=TOP):
    """explicit path, else $env, else rel in build/ or the newest build*/ that has it."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get(env):
        return os.path.abspath(os.environ[env])
    cands = [os.path.join(top, "build", rel)] + sorted(
        glob.glob(os.path.join(top, "build*", rel)), key=os.path.getmtime, reverse=True)
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return None


def hugepages_free():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("HugePages_Free:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def load_str():
    """'load 1.23/0.98/0.50' (1, 5, 15 minute load averages)."""
    return "load " + "/".join(f"{x:.2f}" for x in os.getloadavg())


def femud_cmd(femud, sock, cpu, size_mb, queues=1, pollers=1, extra=()):
    """femud NoSSD command line: pollers on cpu, cpu+1, ... (the main lcore polls when 1)."""
    if pollers <= 1:
        lc = f"0@{cpu}"
    else:  # main lcore shares the first poller's CPU; it only handles control
        lc = ",".join([f"0@{cpu}"] + [f"{i + 1}@{cpu + i}" for i in range(pollers)])
    cmd = [femud, "--lcores", lc, "--rpc", "none"]
    if "--no-huge" not in extra and "--huge" not in extra and \
            hugepages_free() * 2 < size_mb + 256:
        cmd.append("--no-huge")
    cmd += [a for a in extra if a != "--huge"]
    return cmd + ["--dev", f"path={sock},devsz_mb={size_mb},queues={queues}"]


def femud_supports_rpc(femud):
    try:
        r = subprocess.run([femud, "--help"], capture_output=True, text=True, timeout=20)
        return "--rpc" in r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired):
        return False


def start_femud(femud, tmp, cpu, size_mb, extra=(), queues=1, pollers=1, tag="femud"):
    """Start femud in tmp, wait for 'femud: ready'; returns (proc, socket, log path)."""
    sock = os.path.join(tmp, f"{tag}.sock")
    logf = os.path.join(tmp, f"{tag}.log")
    cmd = femud_cmd(femud, sock, cpu, size_mb, queues, pollers, list(extra))
    if not femud_supports_rpc(femud):
        cmd.remove("--rpc")
        cmd.remove("none")
    if pollers <= 1:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    # a fresh log: a "ready" left by an earlier run with the same tag must not count
    with open(logf, "wb") as lf:
        proc = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT, cwd=tmp,
                                start_new_session=True)
    if wait_log_ready(proc, logf, 0, 120):
        return proc, sock, logf
    stop_proc(proc)
    with open(logf, errors="replace") as f:
        raise RuntimeError(f"femud did not start ({' '.join(cmd)}): {f.read()[-600:]}")


def wait_log_ready(proc, logf, offset, timeout, text="femud: ready"):
    """Wait until text appears in logf past offset (bytes); False if proc exits or on timeout."""
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        with open(logf, errors="replace") as f:
            f.seek(offset)
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


def stop_proc(proc, sig=signal.SIGTERM, wait_s=30):
    """Signal proc (a Popen or None) and reap it; SIGKILL after wait_s."""
    if proc and proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def femu_bench(exe, sock, extra, timeout, cpus="1"):
    """One femu-bench run; returns (exit status, JSON result or None, stderr)."""
    cmd = [exe, "-q", "-s", sock, "--json", "--timeout", "5000", "--cpus", cpus] + extra
    if "," not in cpus and "-" not in cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    j = None
    for line in reversed(r.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                pass
            break
    return r.returncode, j, r.stderr.strip()


def steady_iops(j):
    """A run's steady-state IOPS: the median of its whole seconds after the ramp when it
    has at least two of them, else its mean over the measured time."""
    per_s = j.get("iops_per_s") or []
    skip = int(-(-j.get("ramp_s", 0) // 1))
    after = per_s[skip:]
    if len(after) >= 2:
        return statistics.median(after)
    return j["iops"]


def femu_floor(exe, cpus, size_mb, loss_ms=500, extra=(), timeout=180):
    """femu-floor --json on the same CPUs and buffer size; None when it fails."""
    if not exe:
        return None
    cmd = [exe, "--cpus", cpus, "--size-mb", str(size_mb), "--loss-ms", str(loss_ms),
           "--json"] + list(extra)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


def fmt_iops(v):
    if v is None:
        return "-"
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k"


# A QD1 pair is steady when the bare ring measured right before and right after the target's
# sample differs by at most this share: the VM did not change placement mode in between.
PAIR_STEADY_TOL = 0.10


def rate_mean(a, b):
    """The rate of the mean time per request of two rates (their harmonic mean)."""
    return 2 / (1 / a + 1 / b)


def qd1_pair(before, after, iops, tol=PAIR_STEADY_TOL):
    """One QD1 pair from femu-floor --ring-qd1 before and after the target's sample (iops)."""
    a, b = before["ring_qd1_4k_max_iops"], after["ring_qd1_4k_max_iops"]
    ring = rate_mean(a, b)
    p = {"ring_iops": round(ring), "ring_iops_before": round(a), "ring_iops_after": round(b),
         "steady": abs(a - b) <= tol * max(a, b), "iops": round(iops), "ratio": iops / ring}
    va, vb = (f.get("ring_qd1_virtio_4k_max_iops") for f in (before, after))
    if va and vb:
        p.update(virtio_ring_iops=round(rate_mean(va, vb)),
                 virtio_ratio=iops / rate_mean(va, vb))
    return p


def paired_qd1(floor_exe, cpus, size_mb, proc, run_qd1, pairs):
    """QD1 against the bare split ring measured right next to it, in the same vCPU placement.

    These VMs run QD1 at two speeds that change within seconds to minutes, so a floor taken
    once per round may land in the other one, and so may a floor taken only before the
    sample.  The ring is measured before the first sample and after every sample
    (femu-floor --ring-qd1 on the same CPUs and buffer size, the target stopped by SIGSTOP
    meanwhile so that its poller leaves the CPU); run_qd1() runs the target's QD1 sample
    (returns IOPS or None).  Each sample is judged against the mean of the ring before and
    after it, and is steady when those two agree within PAIR_STEADY_TOL.  Returns
    {"pairs": [qd1_pair()...]} and pairs_summary()'s medians, or None when no pair
    completed."""
    got = []
    if not floor_exe or pairs < 1:
        return None

    def ring():
        proc.send_signal(signal.SIGSTOP)
        try:
            return femu_floor(floor_exe, cpus, size_mb, extra=["--ring-qd1"], timeout=120)
        finally:
            proc.send_signal(signal.SIGCONT)

    before = ring()
    for _ in range(pairs):
        iops = run_qd1()
        after = ring()
        if before and after and iops:
            got.append(qd1_pair(before, after, iops))
        before = after
    if not got:
        return None
    return {"pairs": got, **pairs_summary(got)}


def pairs_summary(pairs):
    """Medians over QD1 pairs (paired_qd1's, one run's or pooled), taken over the steady ones
    when there are any, else over all (judged_on says which): the target / bare ring ratio,
    each side's IOPS, and against femu-floor's virtio-layout ring the ratio and its IOPS
    (None when no pair has it)."""
    med = statistics.median
    steady = [p for p in pairs if p.get("steady", True)]
    use = steady or pairs
    v = [p for p in use if "virtio_ratio" in p]
    return {"ratio_median": med(p["ratio"] for p in use),
            "iops_median": med(p["iops"] for p in use),
            "ring_iops_median": med(p["ring_iops"] for p in use),
            "virtio_ratio_median": med(p["virtio_ratio"] for p in v) if v else None,
            "virtio_ring_iops_median": med(p["virtio_ring_iops"] for p in v) if v else None,
            "steady_pairs": len(steady), "judged_on": "steady" if steady else "all"}


def pairs_judged_note(q, total):
    """'N steady pairs of M (...)' for a pairs_summary over total pairs."""
    if q["judged_on"] == "steady":
        n = q["steady_pairs"]
        return (f"{n} steady pair{'s' if n != 1 else ''} of {total}: the ring before and after "
                f"the sample within {100 * PAIR_STEADY_TOL:.0f}%")
    return (f"{total} pair{'s' if total != 1 else ''}, none steady (the ring before and after "
            f"differed by more than {100 * PAIR_STEADY_TOL:.0f}%)")


def virtio_ring_note(s):
    """'; X% of the ring with virtio-blk's request layout (...)' from a pairs_summary, or ''."""
    if s["virtio_ratio_median"] is None:
        return ""
    return (f"; {100 * s['virtio_ratio_median']:.1f}% of the same ring with virtio-blk's request "
            f"layout and EVENT_IDX ({fmt_iops(s['virtio_ring_iops_median'])}), what any backend "
            f"pays with this initiator")


# Queue depths of femu-floor's bare split-ring rate (its keys ring_qd<N>_4k_per_s).
RING_FLOOR_QDS = (32, 128)


def ring_floor_key(qd):
    return f"ring_qd{qd}_4k_per_s"


def ring_floor_note(iops, qd, fl, share=0.85):
    """femud's 4 KiB IOPS at qd as a share of the same run's bare split-ring floor at qd, and
    what that floor implies for a goal of `share` x the random 4 KiB copy rate; None when the
    floor has no ring rate at this queue depth."""
    ring = fl.get(ring_floor_key(qd)) if fl else None
    copy = fl.get("copy4k_per_s") if fl else None
    if not ring or not copy or not iops:
        return None
    # one floor sample: the ring and the copy measured seconds apart, and the VM's speed
    # swings within seconds; tools/bench-turns compares them in turns of one run
    verdict = ("within it" if ring >= share * copy else
               "beyond it in this floor sample (ring and copy measured seconds apart)")
    return (f"{100 * iops / ring:.1f}% of the bare split-ring QD{qd} floor {fmt_iops(ring)}/s, "
            f"which is {100 * ring / copy:.1f}% of the copy rate ({100 * share:.0f}% of the copy "
            f"rate is {verdict})")
