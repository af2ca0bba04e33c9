#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_hostile.sh - every femu-bench --hostile case passes against
# femud (malformed requests and vhost-user messages, each followed by a
# fresh connection serving a correct verified request), femud survives, and
# data written before the cases is intact afterwards.
# Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

start_femud h ",devsz_mb=16,queues=2" || { ko "femud start"; finish; }
expect_ok before -q -s "$SOCK" --verify --rw write --bs 4k --qd 8 --size 8M --verify-gen 5
bench hostile -s "$SOCK" --hostile --timeout 5000
cat "$T/hostile.out"
last=$(tail -n 1 "$T/hostile.out")
if [ "$RC" -eq 0 ] && [[ "$last" =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] &&
	[ "${BASH_REMATCH[1]}" -ge 40 ]; then ok "hostile: $last"
else ko "hostile (exit $RC): $last"; grep FAIL "$T/hostile.out"; fi
n_cases=$(grep -cE '^(PASS|FAIL) ' "$T/hostile.out")
[[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] &&
	[ $((BASH_REMATCH[1] + BASH_REMATCH[2])) -eq "$n_cases" ] && ok "summary counts $n_cases cases" ||
	ko "summary does not match the case lines"
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive after the cases" || ko "femud died"
expect_ok after -q -s "$SOCK" --verify --rw read --bs 4k --qd 8 --size 8M --verify-gen 5
finish
