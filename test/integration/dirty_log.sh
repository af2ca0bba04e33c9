#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dirty_log.sh - femud's dirty logging without a guest: femu-bench --dirty-log
# turns logging on in running queues as QEMU does when a live migration
# starts (LOG_SHMFD, SET_LOG_BASE with a memfd, SET_FEATURES with LOG_ALL,
# SET_VRING_ADDR with the log flag) and checks the log after the run: every
# page femud wrote (used rings, status bytes, every read buffer) marked, the
# descriptor tables and avail rings it only reads not.  On a NoSSD and on a
# BlackBox (completions posted later, from the heap), two queues; reads
# verify the data written before; a plain run afterwards (logging off on a
# new connection) still verifies.  Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

S=$T/n.sock
B=$T/b.sock
start_femud_opts f --lcores 0@0 --dev "path=$S,devsz_mb=16,queues=2" \
	--dev "path=$B,queues=2,femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25" ||
	{ ko "femud start"; finish; }
for d in "$S" "$B"; do
	n=$(basename "$d" .sock)
	expect_ok "${n}_write_logged" -q -s "$d" --rw write --bs 4k --qd 8 --queues 2 --size 8M \
		--verify --verify-gen 5 --dirty-log --timeout 20000
	expect_ok "${n}_read_logged" -q -s "$d" --rw randread --bs 4k --qd 8 --queues 2 --size 8M \
		--time 1 --verify --verify-gen 5 --dirty-log --timeout 20000
	grep -q "read buffers marked" "$T/${n}_read_logged.err" &&
		ok "$n: every read buffer, status byte and used ring page marked" ||
		ko "$n: no full log check: $(cat "$T/${n}_read_logged.err")"
	expect_ok "${n}_read_plain" -q -s "$d" --rw read --bs 4k --qd 8 --queues 2 --size 8M \
		--verify --verify-gen 5 --timeout 20000
	# packed rings: used descriptors are written in the descriptor ring itself
	expect_ok "${n}_packed_write_logged" -q -s "$d" --packed --rw write --bs 4k --qd 8 \
		--queues 2 --size 8M --verify --verify-gen 6 --dirty-log --timeout 20000
	expect_ok "${n}_packed_logged" -q -s "$d" --packed --rw randread --bs 4k --qd 8 --queues 2 \
		--size 8M --time 1 --verify --verify-gen 6 --dirty-log --timeout 20000
	grep -q "used descriptors, status bytes, read buffers marked" "$T/${n}_packed_logged.err" &&
		ok "$n: packed: every read buffer, status byte and used descriptor page marked" ||
		ko "$n: packed: no full log check: $(cat "$T/${n}_packed_logged.err")"
done
n=$(grep -c "started.*dirty logging" "$T/f.log")
[ "$n" -ge 4 ] && ok "femud restarted the running queues with logging ($n starts)" ||
	ko "queues logging: $n starts"
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
