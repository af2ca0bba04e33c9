#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_indirect.sh - requests as Linux's virtio driver sends them once
# VIRTIO_RING_F_INDIRECT_DESC is negotiated (one descriptor naming a table
# of header, data and status), femu-bench --indirect against femud, split
# and packed rings: verified writes and reads at 512 B, 4 KiB and mixed
# sizes on 4 queues, on a NoSSD and a small BlackBox device, the data read
# back through direct chains and the other way round; dirty logging marks
# what femud wrote and never a table it only read; femud answers every
# request without an error and stays up.  Args: femu-bench path, femuctl
# path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl ('$CTL') not built"; exit 1; }

N=$T/nossd.sock B=$T/bbssd.sock
TO="--timeout 30000"
start_femud_opts i --lcores 0 --dev "path=$N,devsz_mb=64,queues=4" --dev "path=$B,$BB_SMALL" ||
	{ ko "femud start"; finish; }
refused() { femud_refused "$CTL" "$1"; }

expect_fail indirect_needs_a_workload 2 "--indirect drives a workload" --selftest-peer --indirect
for layout in split packed; do
	L=
	[ $layout = packed ] && L=--packed
	P="-q --indirect $L --verify --queues 4 --qd 32 $TO"
	for dev in nossd bbssd; do
		S=$N
		[ $dev = bbssd ] && S=$B
		g=$([ $layout = split ] && echo 21 || echo 22)
		n=${dev}_$layout
		expect_ok ${n}_write_4k $P -s "$S" --rw write --bs 4k --size 4M --verify-gen $g
		expect_ok ${n}_randread_4k $P -s "$S" --rw randread --bs 4k --size 4M --ios 20000 \
			--verify-gen $g
		expect_ok ${n}_write_512 $P -s "$S" --rw write --bs 512 --offset 4M --size 1M \
			--verify-gen $g
		expect_ok ${n}_randread_mixed $P -s "$S" --rw randread --bs 512,4k --offset 4M \
			--size 1M --ios 10000 --verify-gen $g
		# direct chains read what the tables wrote, tables read what direct chains wrote
		expect_ok ${n}_direct_reads $L -q --verify --queues 2 --qd 32 $TO -s "$S" --rw read \
			--bs 4k --size 4M --verify-gen $g
		expect_ok ${n}_direct_write $L -q --verify --queues 2 --qd 32 $TO -s "$S" --rw write \
			--bs 4k --offset 6M --size 1M --verify-gen $((g + 10))
		expect_ok ${n}_indirect_reads $P -s "$S" --rw randread --bs 4k --offset 6M --size 1M \
			--ios 5000 --verify-gen $((g + 10))
		# random writes and reads at once, the expectations in a map
		expect_ok ${n}_write_map $P -s "$S" --rw write --bs 4k --offset 8M --size 1M \
			--verify-map "$T/$n.map" --verify-gen $((g + 20))
		expect_ok ${n}_randrw_map $P -s "$S" --rw randrw --bs 512,4k --offset 8M --size 1M \
			--ios 20000 --verify-map "$T/$n.map" --verify-gen $((g + 20))
	done
	# dirty logging: femud marks the pages it wrote, never a table it only read
	expect_ok ${layout}_logged -q -s "$N" --indirect $L --rw randread --bs 4k --qd 8 \
		--queues 2 --size 4M --time 1 --verify --verify-gen $g --dirty-log $TO
	grep -q "read buffers marked.*; indirect tables not" "$T/${layout}_logged.err" &&
		ok "$layout: the log has every page femud wrote and no indirect table" ||
		ko "$layout: no full log check: $(cat "$T/${layout}_logged.err")"
done
bench json -q -s "$N" --indirect --packed --json --ios 1000 --rw randread --bs 4k --size 4M
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["layout"] == "packed" and j["ios"] == 1000 and j["ok"], j' "$T/json.out" &&
	ok "--indirect --json: a packed run of 1000 reads" || ko "json: $(cat "$T/json.out" "$T/json.err")"
for s in "$N" "$B"; do
	r=$(refused "$s")
	[ "$r" = 0 ] && ok "$(basename "$s"): no request refused" || ko "$(basename "$s"): refused '$r'"
done
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
finish
