# SPDX-License-Identifier: GPL-2.0-or-later
"""benchlib - what every measurement script in tools/bench/ shares: finding the built
binaries, starting and stopping femud, running femu-bench and femu-floor, a process's CPU
time, the steady-state figure of a run, medians, the machine's load (printed with every
figure: on a shared machine figures are only comparable within one run) and where results
are written (build-bench/, never the source tree).  It starts processes and writes only the
result files its callers name.
"""
import functools
import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import time

# the source tree: this file is tools/bench/lib/benchlib.py
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# generated results (JSON, charts) go here by default: ignored by git (/build*/)
RESULTS_DIR = os.path.join(TOP, "build-bench")

# name -> (environment variable that overrides it, path inside a meson build directory)
BINARIES = {
    "femud": ("FEMUD", "daemon/femud"),
    "femu-bench": ("FEMU_BENCH", "tools/femu-bench/femu-bench"),
    "femu-floor": ("FEMU_FLOOR", "tools/bench/femu-floor/femu-floor"),
    "femuctl": ("FEMUCTL", "tools/femuctl/femuctl"),
    "vq-cost": ("VQ_COST", "tools/bench/vq-cost/vq-cost"),
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def find_exe(explicit, env, rel, top=TOP, build=None):
    """explicit path, else $env, else rel in build (when given), else in build/ or the newest
    build*/ that has it; None when none is executable."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get(env):
        return os.path.abspath(os.environ[env])
    if build:
        cands = [os.path.join(top, build, rel)]
    else:
        cands = [os.path.join(top, "build", rel)] + sorted(
            glob.glob(os.path.join(top, "build*", rel)), key=os.path.getmtime, reverse=True)
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return None


def find_bin(name, explicit=None, build=None):
    """find_exe() for one of BINARIES by its name."""
    env, rel = BINARIES[name]
    return find_exe(explicit, env, rel, build=build)


def need_bin(prog, name, explicit=None, build=None):
    """find_bin(), or exit with what to build (prog: the script's name for the message)."""
    exe = find_bin(name, explicit, build)
    if not exe:
        sys.exit(f"{prog}: {name} not found: build it (meson setup build && ninja -C build) "
                 f"or give its path (--{name} or ${BINARIES[name][0]})")
    return exe


def add_common_args(ap, binaries=(), size_mb=1024):
    """The options every femud benchmark takes: --size-mb, --target-cpu, --bench-cpu and,
    per name in binaries (of BINARIES), --NAME PATH."""
    ap.add_argument("--size-mb", type=int, default=size_mb,
                    help=f"device (and floor buffer) size in MiB (default {size_mb})")
    ap.add_argument("--target-cpu", type=int, default=0,
                    help="the backend's CPU: femud's poller, femu-floor's backend (default 0)")
    ap.add_argument("--bench-cpu", type=int, default=1,
                    help="the initiator's CPU: femu-bench, femu-floor's rings (default 1)")
    for name in binaries:
        ap.add_argument(f"--{name}", help=f"{name} binary (default ${BINARIES[name][0]}, else "
                        "build/ or the newest build*/ that has it)")


def logger(prog):
    """A log(msg) that prints '[prog] msg' to stderr."""
    def log(msg):
        print(f"[{prog}] {msg}", file=sys.stderr, flush=True)
    return log


def result_path(name):
    """RESULTS_DIR/name, the folder made: the default place of a script's results."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    return os.path.join(RESULTS_DIR, name)


def write_json(path, obj):
    """obj as indented JSON into path (its folder made when missing)."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def med(vals):
    """The median of the values that are not None; None when there are none (or vals is
    None: a metric a run left out)."""
    vals = [v for v in vals or () if v is not None]
    return statistics.median(vals) if vals else None


def proc_cpu_s(pid, children=False):
    """utime + stime of pid (with children: + the waited-for children's), seconds; None when
    it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # after the comm field: state is fields[0]; utime (field 14 overall) is index 11
        return sum(int(x) for x in fields[11:15 if children else 13]) / CLK_TCK
    except (OSError, IndexError, ValueError):
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


@functools.lru_cache(maxsize=None)
def femud_help(femud):
    """femud --help's text (older revisions, built by tools/bench/ab, lack some options)."""
    try:
        r = subprocess.run([femud, "--help"], capture_output=True, text=True, timeout=20)
        return r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def femud_knows(femud, option):
    """Does femud's --help name option?"""
    return option in femud_help(femud)


def drop_unknown(femud, cmd, options):
    """cmd without those of options (each with its value) that femud does not know."""
    for opt in options:
        if opt in cmd and not femud_knows(femud, opt):
            i = cmd.index(opt)
            cmd = cmd[:i] + cmd[i + 2:]
    return cmd


def launch_femud(cmd, tmp, tag="femud", timeout=120, pin=None):
    """Start the femud command line cmd in tmp (pinned to the CPU list pin when given) with a
    fresh log tmp/<tag>.log and wait for 'femud: ready'; returns (proc, log path).  Raises
    RuntimeError with the log's tail when femud exits or is not ready in time."""
    logf = os.path.join(tmp, f"{tag}.log")
    if pin is not None:
        cmd = ["taskset", "-c", str(pin)] + cmd
    # a fresh log: a "ready" left by an earlier run with the same tag must not count
    with open(logf, "wb") as lf:
        proc = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT, cwd=tmp,
                                start_new_session=True)
    if wait_log_ready(proc, logf, 0, timeout):
        return proc, logf
    stop_proc(proc)
    with open(logf, errors="replace") as f:
        raise RuntimeError(f"femud did not start ({' '.join(cmd)}): {f.read()[-600:]}")


def start_femud(femud, tmp, cpu, size_mb, extra=(), queues=1, pollers=1, tag="femud"):
    """Start a NoSSD femud (femud_cmd) in tmp, wait until it is ready; returns (proc, socket,
    log path)."""
    sock = os.path.join(tmp, f"{tag}.sock")
    cmd = drop_unknown(femud, femud_cmd(femud, sock, cpu, size_mb, queues, pollers,
                                        list(extra)), ["--rpc"])
    proc, logf = launch_femud(cmd, tmp, tag, pin=cpu if pollers <= 1 else None)
    return proc, sock, logf


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


def _exit_on_sigterm(signum, _frame):
    """A bench tool stopped with SIGTERM (a timeout around it) unwinds like an exception, so
    that the processes it started are stopped on the way out (its callers' finally blocks):
    a femud left polling would skew every later figure on the machine."""
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, _exit_on_sigterm)


def run_tool(cmd, timeout):
    """Run another bench tool to its end: (exit status, stdout, stderr).  When this one is
    stopped or the timeout passes, the tool gets SIGTERM (so that it stops what it started),
    SIGKILL only after 30 s; subprocess.TimeoutExpired is raised on a timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        stop_proc(p)
        raise
    return p.returncode, out, err


def stop_proc(proc, sig=signal.SIGTERM, wait_s=30):
    """Signal proc (a Popen or None) and reap it; SIGKILL after wait_s."""
    if proc and proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def last_json(text):
    """The last line of text that starts with '{', parsed; None when there is none or it is
    not JSON."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def femu_bench_cmd(exe, sock, extra, cpus="1"):
    """femu-bench's command line: quiet, JSON, on the CPU list cpus (pinned by taskset when
    it is one CPU; None: femu-bench's own choice)."""
    cmd = [exe, "-q", "-s", sock, "--json", "--timeout", "5000"]
    if cpus is not None:
        cmd += ["--cpus", str(cpus)]
        if "," not in str(cpus) and "-" not in str(cpus):
            cmd = ["taskset", "-c", str(cpus)] + cmd
    return cmd + list(extra)


def femu_bench(exe, sock, extra, timeout, cpus="1", retries=0):
    """One femu-bench run; returns (exit status, JSON result or None, stderr).  With retries,
    a run that femud refused because it was still closing the previous connection is tried
    again after a pause."""
    cmd = femu_bench_cmd(exe, sock, extra, cpus)
    for attempt in range(retries + 1):
        if retries:
            time.sleep(0.5 + attempt)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if r.returncode == 0 or "closed the connection" not in r.stderr:
            break
    return r.returncode, last_json(r.stdout), r.stderr.strip()


def femu_bench_json(exe, sock, extra, timeout, cpus="1", retries=0):
    """femu_bench()'s JSON; raises RuntimeError with the command and its stderr when the run
    fails."""
    rc, j, err = femu_bench(exe, sock, extra, timeout, cpus, retries)
    if rc != 0 or j is None:
        cmd = " ".join(femu_bench_cmd(exe, sock, extra, cpus))
        raise RuntimeError(f"{cmd} failed ({rc}):\n{err}")
    return j


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

# What tools/bench/layouts runs packed against split rings on, each next to femu-floor's
# rings of both layouts: (workload as tools/bench/sweep names it, bs, qd)
LAYOUT_WORKLOADS = (("randread 4k QD1", "4k", 1), ("randread 4k QD32", "4k", 32),
                    ("randread 4k QD128", "4k", 128), ("randread 512 QD128", "512", 128))


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
    # swings within seconds; tools/bench/turns compares them in turns of one run
    verdict = ("within it" if ring >= share * copy else
               "beyond it in this floor sample (ring and copy measured seconds apart)")
    return (f"{100 * iops / ring:.1f}% of the bare split-ring QD{qd} floor {fmt_iops(ring)}/s, "
            f"which is {100 * ring / copy:.1f}% of the copy rate ({100 * share:.0f}% of the copy "
            f"rate is {verdict})")
