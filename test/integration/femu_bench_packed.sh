#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_packed.sh - packed virtqueues (VIRTIO_F_RING_PACKED) end to end
# with femu-bench --packed against femud: verified writes and reads on 4
# queues at QD32, 4 KiB and 512 B, on a NoSSD and a small BlackBox device,
# the data read back compared (also through split rings: one device, either
# layout); then every --hostile --packed case passes, femud counts the
# requests it refused or the queues it stopped, stays up and still serves
# both devices with their data intact.  A femud that does not offer packed
# rings fails this test.
# Args: femu-bench path, femuctl path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"
CTL=${2:-}
[ -x "$CTL" ] || { echo "FAIL: femuctl ('$CTL') not built"; exit 1; }

N=$T/nossd.sock B=$T/bbssd.sock
# generous bound on a request: the pinned poller shares a loaded 2-CPU machine
TO="--timeout 30000"
start_femud_opts p --lcores 0 --dev "path=$N,devsz_mb=64,queues=4" --dev "path=$B,$BB_SMALL" ||
	{ ko "femud start"; finish; }
refused() { femud_refused "$CTL" "$1"; }

bench offer -q -s "$N" --packed --ios 1
if [ "$RC" -ne 0 ]; then
	ko "femud does not serve packed rings (exit $RC): $(cat "$T/offer.err")"
	finish
fi
ok "femud offers packed rings"

P="-q --packed --verify --queues 4 --qd 32 $TO"
for dev in nossd bbssd; do
	S=$N
	[ $dev = bbssd ] && S=$B
	# 4 KiB: one sequential pass over the first 6 MiB, then random reads of it
	expect_ok ${dev}_write_4k $P -s "$S" --rw write --bs 4k --size 6M --verify-gen 11
	expect_ok ${dev}_randread_4k $P -s "$S" --rw randread --bs 4k --size 6M --ios 20000 --verify-gen 11
	# 512 B: the next 2 MiB, a sequential pass, random reads of it, and mixed sizes
	expect_ok ${dev}_write_512 $P -s "$S" --rw write --bs 512 --offset 6M --size 2M --verify-gen 12
	expect_ok ${dev}_randread_512 $P -s "$S" --rw randread --bs 512 --offset 6M --size 2M --ios 20000 \
		--verify-gen 12
	expect_ok ${dev}_randread_mixed $P -s "$S" --rw randread --bs 512,4k --offset 6M --size 2M \
		--ios 10000 --verify-gen 12
	# what the packed rings wrote, read through split rings, and the other way round
	expect_ok ${dev}_split_reads_packed_data -q --verify --queues 4 --qd 32 $TO -s "$S" --rw read \
		--bs 4k --size 6M --verify-gen 11
	expect_ok ${dev}_split_write -q --verify --queues 2 --qd 32 $TO -s "$S" --rw write --bs 4k \
		--offset 8M --size 1M --verify-gen 13
	expect_ok ${dev}_packed_reads_split_data $P -s "$S" --rw read --bs 4k --offset 8M --size 1M \
		--verify-gen 13
	# random writes and reads at once over a region written first, the expectations in a map
	expect_ok ${dev}_write_map $P -s "$S" --rw write --bs 4k --offset 10M --size 1M \
		--verify-map "$T/$dev.map" --verify-gen 14
	expect_ok ${dev}_randrw_map $P -s "$S" --rw randrw --bs 4k --offset 10M --size 1M --ios 20000 \
		--verify-map "$T/$dev.map" --verify-gen 14
	expect_ok ${dev}_randrw_map_split -q --verify --queues 4 --qd 32 $TO -s "$S" --rw randread \
		--bs 4k --offset 10M --size 1M --ios 5000 --verify-map "$T/$dev.map" --verify-gen 14
done
# --json names the layout
bench json -q -s "$N" --packed --json --ios 1000 --rw randread --bs 4k --size 6M
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["layout"] == "packed" and j["ios"] == 1000 and j["ok"], j' "$T/json.out" &&
	ok "--json names the packed layout" || ko "json: $(cat "$T/json.out" "$T/json.err")"

# hostile packed rings on the NoSSD device
before=$(refused "$N")
bench hostile -s "$N" --packed --hostile --timeout 5000
cat "$T/hostile.out"
last=$(tail -n 1 "$T/hostile.out")
if [ "$RC" -eq 0 ] && [[ "$last" =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] &&
	[ "${BASH_REMATCH[1]}" -ge 45 ]; then ok "hostile packed: $last"
else ko "hostile packed (exit $RC): $last"; grep FAIL "$T/hostile.out"; cat "$T/hostile.err"; fi
grep -q '^PASS packed_chain_across_ring_end$' "$T/hostile.out" &&
	grep -q '^PASS packed_indirect_nested$' "$T/hostile.out" &&
	grep -q '^PASS packed_base_wrap_mismatch$' "$T/hostile.out" &&
	grep -q '^PASS data_outside_mem$' "$T/hostile.out" && ok "the packed cases ran" ||
	ko "packed cases missing"
after=$(refused "$N")
[ -n "$before" ] && [ -n "$after" ] && [ "$after" -ge $((before + 20)) ] &&
	ok "femud counted the refused requests and stopped queues ($before -> $after)" ||
	ko "refusals not counted: '$before' -> '$after'"
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive after the hostile cases" ||
	{ ko "femud died"; tail -20 "$T/p.log"; finish; }
# both devices still serve, with their data
expect_ok nossd_after -q --verify --queues 4 --qd 32 $TO -s "$N" --rw randread --bs 4k --size 6M \
	--ios 5000 --verify-gen 11
expect_ok bbssd_after $P -s "$B" --rw randread --bs 512 --offset 6M --size 2M --ios 5000 --verify-gen 12
finish
