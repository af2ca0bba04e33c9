#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""systemd_unit.py - femud.service / femud@.service as systemd would run them,
without systemd as PID 1: systemd-analyze verify accepts both units (ExecStart
pointed at the built femud); the unit's ExecStart, with /etc/femud and
/run/femud moved into a temporary folder and $FEMUD_OPTS from its
EnvironmentFile, starts femud from the shipped example configuration with
NOTIFY_SOCKET on a socket read here: READY=1 arrives once every device socket
and the control socket exist, femu-bench writes and verifies a device,
SIGTERM brings STOPPING=1 and exit 0; with JOURNAL_STREAM naming its stderr
every log line carries a "<N>" priority, the right one: start-up and
connections at info, femu-bench --hostile's malformed rings and vhost-user
messages (a queue stopped, a request refused) at warning, SIGTERM at notice;
a bad configuration exits 2 (the unit's RestartPreventExitStatus) without
READY=1.

Args: femu-bench, femud.service, femud@.service (built), the example config.
Env: FEMUD."""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what, flush=True)
    fails += 0 if ok else 1


def unit_keys(path):
    keys = {}
    for line in open(path):
        m = re.match(r"^([A-Za-z]+)=(.*)$", line.strip())
        if m:
            keys.setdefault(m.group(1), []).append(m.group(2))
    return keys


def verify_units(femud, units, tmp):
    """systemd-analyze verify on copies whose ExecStart runs the built femud."""
    paths = []
    for u in units:
        name = os.path.basename(u).replace("@.", "@test.")
        text = re.sub(r"^ExecStart=\S+/femud ", f"ExecStart={femud} ", open(u).read(), flags=re.M)
        dst = os.path.join(tmp, name)
        open(dst, "w").write(text)
        paths.append(dst)
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + paths, capture_output=True,
                       text=True)
    check(r.returncode == 0 and r.stderr.strip() == "",
          f"systemd-analyze verify {' '.join(map(os.path.basename, paths))} {r.stderr.strip()}")


def exec_argv(unit, femud, etc, run, opts):
    """The unit's ExecStart as argv, its folders moved, $FEMUD_OPTS expanded as systemd does."""
    k = unit_keys(unit)
    check(k.get("Type") == ["notify"] and k.get("RuntimeDirectory") == ["femud"] and
          k.get("Restart") == ["on-failure"] and k.get("LimitMEMLOCK") == ["infinity"] and
          k.get("KillSignal") == ["SIGTERM"], "femud.service: notify, RuntimeDirectory, limits")
    env_file = k["EnvironmentFile"][0].lstrip("-")
    line = k["ExecStart"][0]
    sysconf = os.path.dirname(env_file)
    line = line.replace(sysconf, etc).replace("/run/femud", run)
    argv = []
    for w in shlex.split(line):
        if w == "$FEMUD_OPTS":
            argv += opts.split()
        else:
            argv.append(w)
    argv[0] = femud
    return argv, os.path.join(etc, os.path.basename(env_file))


def notify_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(1.0)
    return s


def is_sock(p):
    try:
        return stat.S_ISSOCK(os.stat(p).st_mode)
    except FileNotFoundError:
        return False


def wait_msg(ns, want, proc, secs, seen):
    """Read notifications until one has want (e.g. READY=1); what the sockets were then."""
    end = time.time() + secs
    while time.time() < end:
        try:
            msg = ns.recv(4096).decode()
        except socket.timeout:
            if proc.poll() is not None:
                return None
            continue
        seen.append(msg)
        if want in msg.split("\n"):
            return msg
    return None


def serve(femud, bench, argv, cfg_devs, rpc, tmp):
    ns_path = os.path.join(tmp, "notify")
    ns = notify_socket(ns_path)
    err = open(os.path.join(tmp, "stderr"), "w")
    st = os.fstat(err.fileno())
    env = dict(os.environ, NOTIFY_SOCKET=ns_path, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    out = open(os.path.join(tmp, "stdout"), "w")
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
    seen = []
    try:
        # a socket that exists before READY=1 is fine; one missing at READY=1 is not
        ready = wait_msg(ns, "READY=1", proc, 120, seen)
        socks = [is_sock(p) for p in cfg_devs] + [is_sock(rpc)]
        check(ready is not None, f"READY=1 received ({seen}, exit {proc.poll()})")
        check(all(socks), f"every device socket and the RPC socket exist at READY=1 {socks}")
        check(ready is not None and f"MAINPID={proc.pid}" in ready, "MAINPID is femud's pid")
        r = subprocess.run([bench, "-s", cfg_devs[0], "--rw", "write", "--verify", "--bs", "4k",
                            "--size", str(8 << 20), "-q"], capture_output=True, text=True,
                           timeout=300)
        r2 = subprocess.run([bench, "-s", cfg_devs[0], "--rw", "read", "--verify", "--bs", "4k",
                             "--size", str(8 << 20), "-q"], capture_output=True, text=True,
                            timeout=300)
        check(r.returncode == 0 and r2.returncode == 0,
              f"femu-bench write + read --verify on {os.path.basename(cfg_devs[0])} "
              f"{r.stderr[-300:]}{r2.stderr[-300:]}")
        # hostile input: a ring that loops (queue stopped), a malformed message (refused)
        for case in ("chain_loop", "mem_region_longer_than_file"):
            h = subprocess.run([bench, "-s", cfg_devs[1], "--hostile", "--case", case,
                                "--timeout", "5000"], capture_output=True, text=True,
                               timeout=300)
            check(h.returncode == 0 and re.search(r"^[1-9][0-9]* passed, 0 failed$",
                                                  h.stdout, re.M) is not None,
                  f"femu-bench --hostile --case {case}: {h.stdout[-200:]}{h.stderr[-200:]}")
        proc.send_signal(signal.SIGTERM)
        stopping = wait_msg(ns, "STOPPING=1", proc, 30, seen)
        check(stopping is not None, "STOPPING=1 after SIGTERM")
        rc = proc.wait(timeout=60)
        check(rc == 0, f"exit 0 after SIGTERM (got {rc})")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ns.close()
    lines = open(os.path.join(tmp, "stderr")).read().splitlines()
    bad = [ln for ln in lines if not re.match(r"^<[0-7]>", ln)]
    check(lines and not bad, f"every stderr line has a journal priority ({len(lines)} lines; "
          f"without: {bad[:3]})")
    check("<5>signal 15: stopping" in lines, "SIGTERM logged at notice priority")
    check(any(re.match(r"^<6>EAL up: ", ln) for ln in lines), "start-up logged at info priority")
    sock = re.escape(cfg_devs[1])
    check(any(re.match(rf"^<6>{sock}: frontend pid \d+ .* connected$", ln) for ln in lines),
          "a frontend's connection logged at info priority")
    stopped = [ln for ln in lines if re.search(rf"{sock} queue \d+ .*; queue stopped$", ln)]
    check(stopped and all(ln.startswith("<4>") for ln in stopped),
          f"hostile ring: 'queue stopped' at warning priority {stopped[:2]}")
    refused = [ln for ln in lines if re.search(rf"^<\d>{sock}: vhost-user request \d+ refused", ln)]
    check(refused and all(ln.startswith("<4>") for ln in refused),
          f"hostile message: 'request refused' at warning priority {refused[:2]}")
    femud_err = [ln for ln in lines if re.match(r"^<[0-3]>", ln) and "VHOST_CONFIG" not in ln]
    check(not femud_err, f"no femud line at err or above for a frontend's bad input {femud_err[:3]}")


def bad_config(argv, cfg, tmp):
    ns_path = os.path.join(tmp, "notify-bad")
    ns = notify_socket(ns_path)
    open(cfg, "w").write('{"femud_config": 1, "devices": [{"path": "x", "queues": "999"}]}\n')
    r = subprocess.run(argv, env=dict(os.environ, NOTIFY_SOCKET=ns_path), capture_output=True,
                       text=True, timeout=60)
    got = []
    try:
        while True:
            got.append(ns.recv(4096).decode())
    except (socket.timeout, BlockingIOError):
        pass
    ns.close()
    check(r.returncode == 2 and "queues" in r.stderr and not any("READY=1" in m for m in got),
          f"bad configuration: exit 2, no READY=1 (exit {r.returncode}, {r.stderr.strip()}, {got})")


def main():
    femud = os.environ.get("FEMUD", "")
    if len(sys.argv) != 5 or not os.access(femud, os.X_OK) or not shutil.which("systemd-analyze"):
        print("FAIL: want FEMUD, systemd-analyze and 4 args (femu-bench, units, config)")
        return 1
    bench, unit, tmpl, example = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="femud-unit.")
    try:
        verify_units(femud, [unit, tmpl], tmp)
        etc, run = os.path.join(tmp, "etc"), os.path.join(tmp, "run")
        os.makedirs(etc)
        os.makedirs(run)  # RuntimeDirectory= makes it before ExecStart
        argv, env_file = exec_argv(unit, femud, etc, run, "--no-huge --lcores 0")
        cfg = json.load(open(example))
        for d in cfg["devices"]:
            d["path"] = d["path"].replace("/run/femud", run)
            d["devsz_mb"] = "32"  # the example's 1 GiB, smaller on a shared test machine
        cfg["devices"].append(dict(cfg["devices"][0], path=os.path.join(run, "vdb.sock")))
        json.dump(cfg, open(os.path.join(etc, "femud.json"), "w"))
        devs = [d["path"] for d in cfg["devices"]]
        serve(femud, bench, argv, devs, os.path.join(run, "rpc.sock"), tmp)
        check(not any(os.path.exists(p) for p in devs), "device sockets removed at stop")
        bad_config(argv, os.path.join(etc, "femud.json"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
