#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# qsd_restart_verify.sh - femu-bench against a second backend and across a
# backend restart: qemu-storage-daemon exporting a file (aio=io_uring) takes
# a verified write pass on 2 queues, is stopped and restarted on the same
# file, and a new femu-bench verifies the data with the same generation (the
# generation is all a later read-only pass needs); another generation fails.
# Args: femu-bench path.
NEED_FEMUD=0
. "$(dirname "$0")/femu_bench_lib.sh"

command -v qemu-storage-daemon >/dev/null || { echo "SKIP: qemu-storage-daemon missing"; exit 77; }
IMG=$T/disk.img
truncate -s 64M "$IMG"

start_qsd() {
	SOCK=$T/qsd.sock
	rm -f "$SOCK"
	qemu-storage-daemon --blockdev "driver=file,node-name=f0,filename=$IMG,aio=$1" \
		--export "type=vhost-user-blk,id=e0,node-name=f0,addr.type=unix,addr.path=$SOCK,num-queues=2,writable=on" \
		>"$T/qsd.log" 2>&1 &
	QSD_PID=$!
	pids+=("$QSD_PID")
	for _ in $(seq 1 100); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
	return 1
}
stop_qsd() {
	kill "$QSD_PID" 2>/dev/null
	for _ in $(seq 1 50); do kill -0 "$QSD_PID" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$QSD_PID" 2>/dev/null
}

AIO=io_uring
start_qsd $AIO && sleep 0.3 && kill -0 "$QSD_PID" 2>/dev/null || {
	stop_qsd; AIO=threads; start_qsd $AIO || { ko "qemu-storage-daemon start"; finish; }
	echo "note: io_uring unavailable, using aio=threads"
}
Q="-q --verify --timeout 5000"
expect_ok qsd_write $Q -s "$SOCK" --rw write --bs 512,4k,64k --qd 16 --queues 2 --verify-gen 21
expect_ok qsd_read $Q -s "$SOCK" --rw randread --bs 4k,16k --qd 16 --queues 2 --ios 20000 \
	--verify-gen 21
stop_qsd
start_qsd $AIO || { ko "qemu-storage-daemon restart"; finish; }
expect_ok after_restart $Q -s "$SOCK" --rw read --bs 8k --qd 8 --queues 1 --verify-gen 21
expect_fail other_gen 1 "wrong generation" $Q -s "$SOCK" --rw read --bs 8k --qd 8 --ios 100 \
	--verify-gen 22
stop_qsd
finish
