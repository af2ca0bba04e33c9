#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_cli.sh - femu-bench's errors and modes: bad options (exit 2
# naming the option), a missing socket, a refused connection (stale socket),
# a backend offering too few queues, a backend that never answers (bounded
# wait), a read-only device refusing writes, the --selftest-peer mode,
# --progress counting each worker's completions in a file, and SIGINT ending
# a run with its result still printed.
# Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

expect_fail bad_rw 2 "--rw" --selftest-peer --rw sideways
expect_fail bad_bs 2 "--bs" --selftest-peer --bs 1000
expect_fail bad_qd 2 "--qd" --selftest-peer --qd 400 --qsize 1024
expect_fail no_sock 2 "-s SOCK" --rw read
expect_fail missing 3 "no socket at" -s "$T/nothing.sock" --ios 1

# a stale socket: bound, then the listener exits
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/stale.sock"
expect_fail refused 3 "connection refused" -s "$T/stale.sock" --ios 1

# a listener that accepts and never answers: every wait is bounded
python3 -c '
import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
c=[]
while True: c.append(s.accept()[0])' "$T/mute.sock" &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$T/mute.sock" ] && break; sleep 0.1; done
start=$(date +%s)
expect_fail mute 3 "no reply" -s "$T/mute.sock" --ios 1 --timeout 500
[ $(($(date +%s) - start)) -lt 10 ] && ok "mute backend: bounded wait" || ko "wait not bounded"

start_femud two ",devsz_mb=8,queues=2" || { ko "femud start"; finish; }
expect_fail too_few_queues 3 "offers 2 queues" -s "$SOCK" --queues 4 --ios 10
expect_ok two_queues -q -s "$SOCK" --queues 2 --ios 1000
# --progress: each worker's completions in its own 64-byte line of the file, all of them
"$BENCH" -q -s "$SOCK" --queues 2 --cpus 0,1 --ios 3000 --qd 4 --progress "$T/progress" >/dev/null &&
	python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read()
assert len(d) == 4096 and struct.unpack_from("Q", d, 0)[0] == 1500 and struct.unpack_from("Q", d, 64)[0] == 1500, d[:72]' \
	"$T/progress" && ok "--progress: 1500 completions in each worker's line" ||
	ko "--progress: $(od -An -tu8 -N72 "$T/progress" 2>&1 | head -3)"
expect_fail progress_dir 2 "--progress" -s "$SOCK" --ios 10 --progress "$T/no/such/dir/p"
expect_fail beyond 3 "beyond the device" -s "$SOCK" --offset 16M --ios 10
stop_femud

start_femud ro ",devsz_mb=8,readonly=1" || { ko "femud start"; finish; }
expect_fail ro_write 3 "read-only" -s "$SOCK" --rw randwrite --ios 10
expect_ok ro_read -q -s "$SOCK" --rw randread --ios 100
stop_femud

# the in-process completing peer: exact request counts, every mode
bench peer --selftest-peer -q --rw randread --bs 512 --qd 64 --ios 200000 --json
if [ "$RC" -eq 0 ] && python3 -c '
import json,sys; j=json.load(open(sys.argv[1])); assert j["ios"]==200000 and j["ok"], j' \
	"$T/peer.out"; then ok "selftest-peer counts"; else ko "peer: $(cat "$T/peer.out")"; fi
bench peer_seq --selftest-peer -q --rw write --bs 4k --qd 16 --queues 2 --size 8M --json
if [ "$RC" -eq 0 ] && python3 -c '
import json,sys; j=json.load(open(sys.argv[1])); assert j["ios"]==2048 and j["writes"]==2048, j' \
	"$T/peer_seq.out"; then ok "one sequential pass = size/bs"; else ko "seq: $(cat "$T/peer_seq.out")"; fi
bench peer_mix --selftest-peer -q --rw randrw --mix 25 --bs 4k --qd 16 --ios 100000 --json
if [ "$RC" -eq 0 ] && python3 -c '
import json,sys; j=json.load(open(sys.argv[1]))
assert j["ios"]==100000 and 20000 < j["reads"] < 30000, j' "$T/peer_mix.out"; then
	ok "randrw mix 25% reads"; else ko "mix: $(cat "$T/peer_mix.out")"; fi
# SIGINT ends a run early: in-flight requests drain, the result is still printed, exit 0
timeout 60 "$BENCH" --selftest-peer -q --time 30 --qd 8 --json >"$T/sig.out" 2>"$T/sig.err" &
spid=$!
sleep 0.5
kill -INT "$spid"
wait "$spid"
RC=$?
if [ "$RC" -eq 0 ] && python3 -c '
import json,sys; j=json.load(open(sys.argv[1])); assert j["ok"] and j["ios"] > 0 and j["elapsed_s"] < 20, j' \
	"$T/sig.out"; then ok "SIGINT: drained and reported"; else ko "SIGINT: rc=$RC $(cat "$T/sig.out")"; fi
finish
