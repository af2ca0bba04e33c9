#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""man_pages.py - every manual page renders without groff warnings, and
names every option its tool's --help prints (femud: and every --dev key of
its help and of daemon/options.c; femuctl: every command).

Args: TOOL=PAGE pairs (TOOL an executable, PAGE its rendered roff page).
Env: SRCDIR (the source tree, for daemon/options.c)."""
import os
import re
import subprocess
import sys

fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    fails += 0 if ok else 1


def render(page):
    env = dict(os.environ, LC_ALL="C", MANWIDTH="1000")
    r = subprocess.run(["man", "--warnings", "-l", page], env=env, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def help_text(tool):
    cmd = ["bash", tool] if tool.endswith("femu-launch") else [tool]
    r = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: {tool} --help exited {r.returncode}: {r.stderr}")
    return r.stdout + r.stderr


def options_of(text):
    return set(re.findall(r"(?<![\w/.-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", text))


def dev_keys(help_txt):
    keys = set(re.findall(r"^\s+([a-z_]+)=", help_txt, re.M))
    start = help_txt.index("BlackBox keys:")
    block = help_txt[start:help_txt.index("--rpc PATH", start)]
    keys |= set(re.findall(r"\b([a-z]+(?:_[a-z0-9]+)+|nchs)\b", block))
    src = open(os.path.join(os.environ["SRCDIR"], "daemon", "options.c")).read()
    keys |= set(re.findall(r'strcmp\(key, "([a-z_]+)"\)', src))
    return keys


def main():
    pairs = [a.split("=", 1) for a in sys.argv[1:]]
    if len(pairs) < 5 or not os.environ.get("SRCDIR"):
        raise SystemExit("FAIL: want 5 TOOL=PAGE pairs and SRCDIR")
    for tool, page in pairs:
        name = os.path.basename(tool)
        rc, text, warn = render(page)
        check(rc == 0 and warn.strip() == "" and f"{name}(" in text,
              f"{os.path.basename(page)} renders without warnings {warn.strip()[:300]}")
        h = help_text(tool)
        opts = options_of(h)
        check(len(opts) >= 3, f"{name} --help prints options ({len(opts)})")
        missing = sorted(o for o in opts if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", text))
        check(not missing, f"{name}: every --help option in its page (missing: {missing})")
        if name == "femud":
            keys = dev_keys(h)
            check(len(keys) >= 30, f"femud: --dev keys found ({len(keys)})")
            missing = sorted(k for k in keys if not re.search(r"\b" + k + r"\b", text))
            check(not missing, f"femud: every --dev key in femud.8 (missing: {missing})")
        if name == "femuctl":
            cmds = set(re.findall(r"^  ([a-z][a-z-]+) ", h[h.index("Commands:"):h.index("Options:")], re.M))
            check(len(cmds) >= 10, f"femuctl: commands found ({len(cmds)})")
            missing = sorted(c for c in cmds if not re.search(r"^\s+" + c + r"\b", text, re.M))
            check(not missing, f"femuctl: every command in femuctl.1 (missing: {missing})")
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
