# SPDX-License-Identifier: GPL-2.0-or-later
"""turns - femud's rate against femu-floor's, in turns inside one run (tools/bench/turns,
and tools/bench/sweep's floor goal lines).

Every side stays up for the whole measurement and is stopped (SIGSTOP) while another has
the CPUs: femud with a femu-bench run on it (femu-bench --progress), optionally a second
femud build with its own femu-bench (B, for an A/B), and femu-floor's sides: at QD1
--ring-qd1-loop (the bare ring) and --ring-qd1-loop --virtio-layout, at higher depth
--copy-loop (one core's overlapped random 4 KiB copy; 4 KiB reads only) and --ring-loop
--qd N (the bare split ring at the same depth and block size: what any backend of that ring
reaches with femu-bench's layout, so ring/copy says how much of the copy rate the ring itself
leaves).  A turn continues each side in the order bare, copy, femud, [B,] virtio, ring
(reversed every other turn), lets it settle, reads its
completion counter for a slice of time and stops it again (with B, femud and B trade
places every two turns): the sides of a turn are a
fraction of a second apart, inside one placement mode of the VM far more often than two
separate runs are.  Before each turn, with every side stopped, femu-floor --rtt takes the
cache-line round trip between the two CPUs (a few ms): the placement the turn ran in.  The
ratios at QD1 follow it (on one machine: ~130 ns round trips gave femud ~95% of the bare ring,
~700 ns ones ~85%), so the summary also splits the turns by it.

With layouts ("split", "packed") a second femud of the same build serves femu-bench --packed
(side "packed") next to the split one (side "femud"), and femu-floor's packed ring is a floor
side of its own (femu-floor --layout packed: "pbare" at QD1, "pring" at higher depth), so
packed/split and each layout against its own floor come from the same turns.  With
peer_sides, above QD1 and on direct chains, femu-bench against its in-process peer
(--selftest-peer: a backend that completes each request and moves no data, on the target
CPU) is a side for each layout too ("peer", "ppeer"): the rate the initiator and the ring
traffic alone allow, so ppeer/peer says what the packed ring costs this initiator before
any backend work.
"""
import json
import mmap
import os
import signal
import statistics
import struct
import subprocess
import time
from dataclasses import dataclass, field

from benchlib import start_femud, stop_proc

# the floor goals: femud's 4 KiB QD1 >= 90% of the bare ring's, QD32/QD128 >= 85% of the copy rate
GOALS = {"bare": 0.90, "copy": 0.85}
FLOOR_SIDES = ("bare", "copy", "virtio", "ring", "pbare", "pring")
# the femu-bench sides: split rings (femud), a second build (b), packed rings (packed)
BENCH_SIDES = ("femud", "b", "packed")
# femu-bench --selftest-peer on split and on packed rings (TurnCfg.peer_sides)
PEER_SIDES = ("peer", "ppeer")
# each floor side's layout: femud's split rings are judged against the split ones, the
# packed side against the packed ones (and both against the copy rate)
PACKED_FLOORS = ("pbare", "pring")


@dataclass
class TurnCfg:
    """What the sides run and how the turns are taken (times in seconds)."""
    femud: str
    femu_bench: str
    femu_floor: str = None  # None: no femu-floor side
    b_femud: str = None
    b_femu_bench: str = None
    femud_args: list = field(default_factory=list)
    target_cpu: int = 0
    bench_cpu: int = 1
    size_mb: int = 1024
    qd: int = 1
    bs: str = "4k"
    rw: str = "randread"
    turns: int = 60
    warmup: int = 3
    slice_s: float = 0.3
    settle_s: float = 0.05
    rtt_exe: str = None  # femu-floor for the round trip before each turn; None: not taken
    ring_side: bool = True  # above QD1: femu-floor's split ring at cfg.qd as a side too
    layouts: tuple = ("split",)  # with "packed": femu-bench --packed on its own femud too
    bench_args: tuple = ()  # more femu-bench options on every femud side (--indirect)
    peer_sides: bool = False  # above QD1, no bench_args: femu-bench --selftest-peer sides


class Side:
    """One side of the turns: its processes (continued in this order, stopped in the
    reverse one) and the completion counter it keeps in a file (8 bytes at offset 0)."""

    def __init__(self, name, procs, counter):
        self.name, self.procs, self.counter = name, procs, counter
        self.map = None

    def count(self):
        return struct.unpack_from("Q", self.map, 0)[0]

    def wait_started(self, timeout):
        """Wait until the counter file exists and counts; False when a process exited."""
        end = time.time() + timeout
        while time.time() < end:
            if any(p.poll() is not None for p in self.procs):
                return False
            if self.map is None and os.path.exists(self.counter) and \
                    os.path.getsize(self.counter) >= 8:
                with open(self.counter, "rb") as f:
                    self.map = mmap.mmap(f.fileno(), 8, access=mmap.ACCESS_READ)
            if self.map is not None and self.count() > 0:
                return True
            time.sleep(0.05)
        return False

    def cont(self):
        for p in self.procs:
            p.send_signal(signal.SIGCONT)

    def stop(self):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGSTOP)

    def alive(self):
        return all(p.poll() is None for p in self.procs)

    def slice(self, settle, length):
        """Continue, let it settle, count for length seconds, stop: the rate (per second)
        and the counted interval (CLOCK_MONOTONIC seconds)."""
        self.cont()
        time.sleep(settle)
        c0, t0 = self.count(), time.monotonic()
        time.sleep(length)
        c1, t1 = self.count(), time.monotonic()
        self.stop()
        return (c1 - c0) / (t1 - t0), t0, t1


def _femud_side(cfg, tmp, name, femud, femu_bench, extra=()):
    """femud and a femu-bench run on it (its --time far beyond the turns, ended by SIGINT);
    extra: more femu-bench options (--packed)."""
    proc, sock, _ = start_femud(femud, tmp, cfg.target_cpu, cfg.size_mb, cfg.femud_args,
                                tag=name)
    count = os.path.join(tmp, f"{name}.count")
    fb = subprocess.Popen(["taskset", "-c", str(cfg.bench_cpu), femu_bench, "-q", "-s", sock,
                           "--json", "--cpus", str(cfg.bench_cpu), "--rw", cfg.rw, "--bs",
                           str(cfg.bs), "--qd", str(cfg.qd), "--time", "86400", "--timeout",
                           "5000", "--progress", count, *cfg.bench_args, *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)
    return Side(name, [proc, fb], count)


def _peer_side(cfg, tmp, name, extra=()):
    """femu-bench against its in-process peer (the peer on the target CPU), the femud
    sides' workload; extra: --packed."""
    count = os.path.join(tmp, f"{name}.count")
    fb = subprocess.Popen([cfg.femu_bench, "-q", "--json", "--selftest-peer", "--cpus",
                           str(cfg.bench_cpu), "--peer-cpu", str(cfg.target_cpu), "--rw",
                           cfg.rw, "--bs", str(cfg.bs), "--qd", str(cfg.qd), "--time", "86400",
                           "--timeout", "5000", "--progress", count, *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)
    return Side(name, [fb], count)


def bs_bytes(bs):
    """femu-bench's --bs (512, 4k, 64K ...) in bytes; None when it is no size."""
    s = str(bs).lower()
    mult = {"k": 1024, "m": 1 << 20}.get(s[-1:], 1)
    try:
        return int(s[:-1] if mult > 1 else s) * mult
    except ValueError:
        return None


def floor_takes_bs(bs, qd):
    """femu-floor has sides of bs-byte reads at queue depth qd: 4 KiB at QD1 (its QD1
    rings), 512 B to 4 KiB in steps of 512 B above (its rings at depth, --bs)."""
    b = bs_bytes(bs)
    if qd == 1:
        return b == 4096
    return b is not None and 512 <= b <= 4096 and b % 512 == 0


def _ring_mode(cfg, layout):
    """femu-floor's ring at cfg.qd with cfg.bs reads (--ring-loop FILE first)."""
    mode = ["--ring-loop", "--qd", str(cfg.qd)]
    if bs_bytes(cfg.bs) != 4096:
        mode += ["--bs", str(bs_bytes(cfg.bs))]
    return mode + (["--layout", "packed"] if layout == "packed" else [])


def _floor_side(cfg, tmp, name, mode):
    count = os.path.join(tmp, f"{name}.count")
    p = subprocess.Popen([cfg.femu_floor, "--cpus", f"{cfg.target_cpu},{cfg.bench_cpu}",
                          "--size-mb", str(cfg.size_mb), mode[0], count] + mode[1:],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    return Side(name, [p], count)


def start_sides(cfg, tmp, sides):
    """Start every side into the dict sides, one after the other, each stopped once it
    counts.  None, or what failed (sides then holds what started, for stop_sides)."""
    starts = [("femud", lambda: _femud_side(cfg, tmp, "femud", cfg.femud, cfg.femu_bench))]
    if cfg.b_femud:
        starts.append(("b", lambda: _femud_side(cfg, tmp, "b", cfg.b_femud,
                                                cfg.b_femu_bench or cfg.femu_bench)))
    packed = "packed" in cfg.layouts
    split = "split" in cfg.layouts
    if packed:
        starts.append(("packed", lambda: _femud_side(cfg, tmp, "packed", cfg.femud,
                                                     cfg.femu_bench, ("--packed",))))
    if cfg.femu_floor and cfg.qd == 1:
        if split:
            starts.append(("bare", lambda: _floor_side(cfg, tmp, "bare", ["--ring-qd1-loop"])))
            starts.append(("virtio", lambda: _floor_side(cfg, tmp, "virtio",
                                                         ["--ring-qd1-loop", "--virtio-layout"])))
        if packed:
            starts.append(("pbare", lambda: _floor_side(
                cfg, tmp, "pbare", ["--ring-qd1-loop", "--layout", "packed"])))
    elif cfg.femu_floor:
        # one core's copy rate is of 4 KiB blocks: a floor of 4 KiB reads only
        if bs_bytes(cfg.bs) == 4096:
            starts.append(("copy", lambda: _floor_side(cfg, tmp, "copy", ["--copy-loop"])))
        if cfg.ring_side and split:
            starts.append(("ring", lambda: _floor_side(cfg, tmp, "ring",
                                                       _ring_mode(cfg, "split"))))
        if cfg.ring_side and packed:
            starts.append(("pring", lambda: _floor_side(cfg, tmp, "pring",
                                                        _ring_mode(cfg, "packed"))))
    if cfg.peer_sides and cfg.qd > 1 and not cfg.bench_args:
        if split:
            starts.append(("peer", lambda: _peer_side(cfg, tmp, "peer")))
        if packed:
            starts.append(("ppeer", lambda: _peer_side(cfg, tmp, "ppeer", ("--packed",))))
    for name, start in starts:
        sides[name] = start()
        if not sides[name].wait_started(120):
            return f"{name} did not start counting"
        sides[name].stop()
    return None


def stop_sides(sides):
    """Continue and end every side: the rings, then each femu-bench (it drains) before its
    femud.  {name: (exit status, stdout, stderr)}, femu-bench runs as '<side>-bench'."""
    outs = {}
    for s in sides.values():
        s.cont()
    for name in FLOOR_SIDES + PEER_SIDES:
        if name in sides:
            p = sides[name].procs[0]
            stop_proc(p, signal.SIGINT if name in PEER_SIDES else signal.SIGTERM)
            outs[name] = (p.returncode, p.stdout.read(), p.stderr.read())
    for name in BENCH_SIDES:
        if name in sides:
            femud, fb = sides[name].procs
            stop_proc(fb, signal.SIGINT)
            outs[f"{name}-bench"] = (fb.returncode, fb.stdout.read(), fb.stderr.read())
            stop_proc(femud, signal.SIGINT)
    return outs


def turn_rtt(cfg):
    """The cache-line round trip between the two CPUs now (ns, femu-floor --rtt), or None."""
    if not cfg.rtt_exe:
        return None
    try:
        r = subprocess.run([cfg.rtt_exe, "--cpus", f"{cfg.target_cpu},{cfg.bench_cpu}", "--rtt",
                            "--json"], capture_output=True, text=True, timeout=10)
        return float(json.loads(r.stdout)["rtt_ns"]) if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return None


def run_turns(cfg, sides, windows=None):
    """The turns: per measured turn {side: rate}, and the round trip taken before each
    (ns; None where not taken); each measured slice's (side, turn, t0, t1) appended to
    windows (a list) when given.  Raises RuntimeError when a side exits."""
    names = [n for n in ("bare", "pbare", "copy", "femud", "b", "packed", "virtio", "ring",
                         "pring", "peer", "ppeer") if n in sides]
    swapped = [{"femud": "b", "b": "femud"}.get(n, n) for n in names] if "b" in sides else names
    turns, rtts = [], []
    for k in range(cfg.warmup + cfg.turns):
        # reversed every other turn; with B, femud and B also trade places every two turns,
        # so that each sits next to each floor side (and after it) as often as the other
        order = names if (k // 2) % 2 == 0 else swapped
        order = order if k % 2 == 0 else list(reversed(order))
        rates, rtt, spans = {}, turn_rtt(cfg), []
        for name in order:
            if not sides[name].alive():
                raise RuntimeError(f"{name} exited during turn {k}")
            rates[name], t0, t1 = sides[name].slice(cfg.settle_s, cfg.slice_s)
            spans.append((name, len(turns), t0, t1))
        if k >= cfg.warmup:
            turns.append(rates)
            rtts.append(rtt)
            if windows is not None:
                windows.extend(spans)
    return turns, rtts


def measure(cfg, tmp, windows=None, started=None):
    """Start the sides, take the turns, end the sides: (turns, rtts, None) or (None, None,
    error); rtts: the round trip before each turn, windows: each measured slice
    (run_turns); started(): called once every side is up, before the turns (a profiler
    started there knows every side's mappings)."""
    sides = {}
    turns = rtts = None
    try:
        err = start_sides(cfg, tmp, sides)
        if err is None and started is not None:
            started()
        if err is None:
            turns, rtts = run_turns(cfg, sides, windows)
    except RuntimeError as e:
        err = str(e)
    finally:
        outs = stop_sides(sides)
    for name in BENCH_SIDES:
        rc, _, fb_err = outs.get(f"{name}-bench", (0, "", ""))
        if rc != 0 and err is None:
            err = f"{name}'s femu-bench failed ({rc}): {fb_err[-600:]}"
    for name in PEER_SIDES:
        rc, _, fb_err = outs.get(name, (0, "", ""))
        if rc != 0 and err is None:
            err = f"{name} (femu-bench --selftest-peer) failed ({rc}): {fb_err[-600:]}"
    return (turns, rtts, None) if err is None else (None, None, err)


def _quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def ratio_summary(turns, num, den):
    """num/den per turn: median, quartiles, turns num was ahead, and for a floor side with
    a goal its share and the turns at or above it."""
    r = [t[num] / t[den] for t in turns if t[den] > 0]
    q1, med, q3 = _quartiles(r)
    out = {"median": med, "q1": q1, "q3": q3, "ahead": sum(x > 1 for x in r), "n": len(r)}
    if den in GOALS:
        out["goal"] = GOALS[den]
        out["at_least_goal"] = sum(x >= GOALS[den] for x in r)
    return out


def _judged_against(who, fl):
    """A femu-bench side is judged against its own layout's rings, and every side against
    the copy rate."""
    return fl == "copy" or (fl in PACKED_FLOORS) == (who == "packed")


def ratios(turns):
    """The per-turn ratios of femud (and B, and packed) to each floor side of its layout,
    B/femud, packed/femud (packed rings over split ones), the split ring's share of the
    copy rate (ring_over_copy: how much of it the ring leaves) and the packed ring's
    (pring_over_copy), and the packed floors over the split ones."""
    out = {}
    for who in BENCH_SIDES:
        if who not in turns[0]:
            continue
        for fl in FLOOR_SIDES:
            if fl in turns[0] and _judged_against(who, fl):
                out[f"{who}_over_{fl}"] = ratio_summary(turns, who, fl)
    if "b" in turns[0]:
        out["b_over_femud"] = ratio_summary(turns, "b", "femud")
    if "packed" in turns[0] and "femud" in turns[0]:
        out["packed_over_femud"] = ratio_summary(turns, "packed", "femud")
    if "ring" in turns[0] and "copy" in turns[0]:
        out["ring_over_copy"] = ratio_summary(turns, "ring", "copy")
    if "pring" in turns[0] and "copy" in turns[0]:
        out["pring_over_copy"] = ratio_summary(turns, "pring", "copy")
    if "pring" in turns[0] and "ring" in turns[0]:
        out["pring_over_ring"] = ratio_summary(turns, "pring", "ring")
    if "pbare" in turns[0] and "virtio" in turns[0]:
        out["pbare_over_virtio"] = ratio_summary(turns, "pbare", "virtio")
    for who, peer in (("femud", "peer"), ("packed", "ppeer")):
        if who in turns[0] and peer in turns[0]:
            out[f"{who}_over_{peer}"] = ratio_summary(turns, who, peer)
    if "ppeer" in turns[0] and "peer" in turns[0]:
        out["ppeer_over_peer"] = ratio_summary(turns, "ppeer", "peer")
    if "ppeer" in turns[0] and "femud" in turns[0]:
        # what the initiator allows packed rings against what femud does on split ones
        out["ppeer_over_femud"] = ratio_summary(turns, "ppeer", "femud")
    return out


# a round trip this much longer than the next shorter one starts another placement
RTT_CLASS_STEP = 1.5


def rtt_classes(rtts):
    """The turns grouped by round trip: lists of turn indexes, shortest round trips first;
    a class ends where the next longer round trip is over RTT_CLASS_STEP times its own."""
    order = sorted(range(len(rtts)), key=lambda i: rtts[i])
    classes = [[order[0]]]
    for prev, i in zip(order, order[1:]):
        if rtts[i] > RTT_CLASS_STEP * rtts[prev]:
            classes.append([])
        classes[-1].append(i)
    return classes


def summarize(turns, rtts=None):
    """Median rate of each side and the per-turn ratios of femud (and B) to each ring; with
    a round trip for every turn, its quartiles and the ratios per placement (rtt_classes)."""
    out = {"turns": len(turns)}
    for name in turns[0]:
        out[f"{name}_iops"] = statistics.median(t[name] for t in turns)
    out.update(ratios(turns))
    if rtts and len(rtts) == len(turns) and all(r is not None for r in rtts):
        q1, med, q3 = _quartiles(rtts)
        out["rtt_ns"] = {"median": med, "q1": q1, "q3": q3, "min": min(rtts), "max": max(rtts)}
        out["by_rtt"] = [{"rtt_ns_min": min(rtts[i] for i in c),
                          "rtt_ns_max": max(rtts[i] for i in c), "n": len(c),
                          **ratios([turns[i] for i in c])} for c in rtt_classes(rtts)]
    return out


def ratio_text(r, pct=True):
    """'93.7% (quartiles 90.5-97.6%, >= 90% in 48 of 60 turns)' or the B/A form."""
    if pct:
        goal = (f", >= {r['goal']:.0%} in {r['at_least_goal']} of {r['n']} turns"
                if "goal" in r else f", {r['n']} turns")
        return (f"{r['median'] * 100:.1f}% (quartiles {r['q1'] * 100:.1f}-{r['q3'] * 100:.1f}%"
                f"{goal})")
    return (f"{r['median']:.3f} (quartiles {r['q1']:.3f}-{r['q3']:.3f}, ahead in {r['ahead']} "
            f"of {r['n']} turns)")
