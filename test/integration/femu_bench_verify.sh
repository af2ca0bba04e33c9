#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_verify.sh - femu-bench --verify against femud NoSSD: a write
# pass then read passes with mixed block sizes on 1 and 4 queues (also
# random reads and a random read/write mix), and a reconnect keeps data: a
# new femu-bench process verifies what an earlier one wrote.
# Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

start_femud v ",devsz_mb=64,queues=4" || { ko "femud start"; finish; }
Q="-q -s $SOCK --verify --timeout 5000"

expect_ok write1q $Q --rw write --bs 512,4k,64k --qd 8 --queues 1 --verify-gen 11
grep -q "writes [1-9]" "$T/write1q.out" && ok "write pass did writes" || ko "no writes"
expect_ok read1q $Q --rw read --bs 4k,512,128k --qd 8 --queues 1 --verify-gen 11
expect_ok randread1q $Q --rw randread --bs 512,8k,64k --qd 16 --queues 1 --ios 20000 \
	--verify-gen 11
# 4 queues: a new generation over the whole device, then read it back
expect_ok write4q $Q --rw write --bs 4k,16k,1k --qd 16 --queues 4 --verify-gen 12
expect_ok read4q $Q --rw read --bs 512,32k --qd 16 --queues 4 --verify-gen 12
expect_ok randrw4q $Q --rw randrw --mix 70 --bs 512,4k,64k --qd 32 --queues 4 --ios 40000 \
	--verify-gen 12
expect_ok randread4q $Q --rw randread --bs 4k --qd 32 --queues 4 --time 1 --verify-gen 12
# two pinned worker threads, each owning two of the queues
expect_ok threads2 $Q --rw randrw --mix 50 --bs 512,4k --qd 8 --queues 4 --cpus 0,1 --ios 20000 \
	--verify-gen 12
grep -q "threads=2" "$T/threads2.out" && ok "two worker threads" || ko "threads: $(head -1 "$T/threads2.out")"
# JSON output carries the keys scripts read
bench json $Q --rw randread --bs 4k --qd 4 --ios 1000 --verify-gen 12 --json
if [ "$RC" -eq 0 ] && python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
assert j["ios"]==1000 and j["ok"] is True and j["verify_errors"]==0, j
assert j["iops"]>0 and j["mbps"]>0
for k in ("mean","p50","p99","p999","max"): assert j["lat_us"][k]>0, k
assert j["lat_us"]["p50"]<=j["lat_us"]["p99"]<=j["lat_us"]["p999"]<=j["lat_us"]["max"]
' "$T/json.out"; then ok "json keys"; else ko "json: $(cat "$T/json.out" "$T/json.err")"; fi

# reconnect keeps data: separate processes write, then read and verify
expect_ok rc_write $Q --rw write --bs 4k --qd 8 --queues 2 --size 8M --offset 16M --verify-gen 99
expect_ok rc_read1 $Q --rw read --bs 4k --qd 8 --queues 1 --size 8M --offset 16M --verify-gen 99
expect_ok rc_read2 $Q --rw randread --bs 512,4k --qd 8 --queues 3 --size 8M --offset 16M \
	--ios 5000 --verify-gen 99
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud still running" || ko "femud died"
finish
