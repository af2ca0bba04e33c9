# SPDX-License-Identifier: GPL-2.0-or-later
"""cpuprof - where the target CPU's time goes while each side of the turns runs
(tools/bench/turns --profile).

perf record samples the target CPU on cpu-clock (a VM without a PMU offers no other event)
for the whole measurement, stamping each sample with CLOCK_MONOTONIC, the clock the turns
count their slices by.  A sample belongs to the side whose counted slice holds it (the
settle time and everything between slices are left out) and to the placement of that
slice's turn (its round-trip class, turns.rtt_classes).  Per placement and side: the share
of its samples each function took and, with the side's median rate over those turns, the
nanoseconds per request spent there.  A poller that spins on an empty ring shows it here
too: the profile is of the CPU, not of the requests.
"""
import bisect
import os
import signal
import statistics
import subprocess
import time

# samples per second: a 0.3 s slice gets ~1500, cheap next to a poller's work
PROFILE_HZ = 4999
# the perf binary: $PERF (another version's, say), else perf from PATH
PERF = os.environ.get("PERF", "perf")


class Recorder:
    """perf record on one CPU into path until stop()."""

    def __init__(self, cpu, path, hz=PROFILE_HZ):
        self.path = path
        if os.path.exists(path):
            os.remove(path)  # else perf keeps it as path.old, and the wait below ends at once
        self.proc = subprocess.Popen(
            [PERF, "record", "-q", "-e", "cpu-clock", "-F", str(hz), "-C", str(cpu),
             "--clockid", "monotonic", "-o", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # perf writes its header once it records; the turns start after that
        end = time.monotonic() + 10
        while time.monotonic() < end and self.proc.poll() is None and \
                not (os.path.exists(path) and os.path.getsize(path) > 0):
            time.sleep(0.01)

    def stop(self):
        """End the recording; None, or why it failed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "perf record did not stop"
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return f"perf record wrote nothing: {err.strip()[-300:]}"
        return None


def perf_usable():
    """None when perf can sample a CPU here, else why not."""
    try:
        r = subprocess.run([PERF, "record", "-q", "-e", "cpu-clock", "-C", "0", "-o",
                            os.devnull, "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"perf not usable: {e}"
    return None if r.returncode == 0 else f"perf record failed: {r.stderr.strip()[-300:]}"


def parse_script(text):
    """(time in s, function) of each sample in `perf script -F time,ip,sym` output."""
    out = []
    for line in text.splitlines():
        stamp, sep, rest = line.partition(":")
        if not sep:
            continue
        try:
            t = float(stamp)
        except ValueError:
            continue
        fields = rest.split()  # the address, then the function when perf knows it
        out.append((t, fields[1] if len(fields) > 1 else "[unknown]"))
    return out


def read_samples(path):
    """The samples of a recording (parse_script); raises RuntimeError when perf fails."""
    r = subprocess.run([PERF, "script", "-i", path, "-F", "time,ip,sym", "--ns"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perf script failed: {r.stderr.strip()[-300:]}")
    return parse_script(r.stdout)


def attribute(samples, windows, classes, turns, top=8):
    """The profile per placement: for each class of turn indexes (turns.rtt_classes), the
    round trips it spans are the caller's; here, per side, its samples in the counted slices
    of those turns, its median rate there and its top functions ({"function", "share",
    "ns_per_request"}).  windows: (side, turn index, t0, t1) of each counted slice."""
    wins = sorted(windows, key=lambda w: w[2])
    starts = [w[2] for w in wins]
    counts = {}  # (side, turn) -> {function: samples}
    for t, fn in samples:
        i = bisect.bisect_right(starts, t) - 1
        if i < 0 or t > wins[i][3]:
            continue
        side, turn = wins[i][0], wins[i][1]
        per = counts.setdefault((side, turn), {})
        per[fn] = per.get(fn, 0) + 1
    out = []
    for members in classes:
        sides = {}
        for side in sorted({w[0] for w in wins}):
            fns, n = {}, 0
            for turn in members:
                for fn, c in counts.get((side, turn), {}).items():
                    fns[fn] = fns.get(fn, 0) + c
                    n += c
            rate = statistics.median(turns[k][side] for k in members)
            ns = 1e9 / rate if rate > 0 else 0.0
            ranked = sorted(fns.items(), key=lambda x: (-x[1], x[0]))[:top]
            sides[side] = {"samples": n, "rate": rate, "ns_per_request": ns,
                           "top": [{"function": fn, "share": c / n,
                                    "ns_per_request": ns * c / n} for fn, c in ranked]}
        out.append({"turns": list(members), "sides": sides})
    return out
