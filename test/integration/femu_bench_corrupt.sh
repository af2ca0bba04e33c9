#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_corrupt.sh - femu-bench --verify really detects bad data: a
# region overwritten with another generation, never-written (zero) sectors
# and data misdirected to another LBA each make the read pass fail with the
# LBA in the message; the untouched part still verifies.
# Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

start_femud c ",devsz_mb=32,queues=2" || { ko "femud start"; finish; }
Q="-q -s $SOCK --verify --timeout 5000"

# never written: zeros are reported
expect_fail zeros 1 "never written" $Q --rw read --bs 4k --qd 4 --size 1M
if grep -Eq "verify FAILED at LBA [0-9]+ " "$T/zeros.err"; then ok "zeros: LBA named"
else ko "zeros: no LBA"; fi

expect_ok fill $Q --rw write --bs 64k --qd 8 --verify-gen 1
expect_ok clean $Q --rw read --bs 64k --qd 8 --verify-gen 1
# corrupt 64 KiB at 5 MiB (sectors 10240..10367) with generation 2
expect_ok corrupt $Q --rw write --bs 4k --qd 4 --offset 5M --size 64k --verify-gen 2
expect_fail detect 1 "wrong generation" $Q --rw read --bs 4k --qd 1 --verify-gen 1
if grep -Eq "LBA 102[4-9][0-9] |LBA 103[0-6][0-9] " "$T/detect.err"; then
	ok "mismatch names an LBA in the corrupted range"; else ko "LBA: $(cat "$T/detect.err")"; fi
# the run that hit a mismatch says FAILED and the JSON says ok=false
bench detect_json $Q --rw read --bs 4k --qd 1 --offset 5M --size 64k --verify-gen 1 --json
if [ "$RC" -eq 1 ] && grep -q '"ok":false' "$T/detect_json.out"; then ok "json ok=false"
else ko "json after mismatch: rc=$RC $(cat "$T/detect_json.out")"; fi
# the rest still verifies
expect_ok untouched_lo $Q --rw read --bs 4k --qd 4 --size 5M --verify-gen 1
expect_ok untouched_hi $Q --rw read --bs 4k --qd 4 --offset 5184k --size 8M --verify-gen 1
expect_ok corrupted_is_gen2 $Q --rw read --bs 512 --qd 4 --offset 5M --size 64k --verify-gen 2

# misdirected data: gen-3 blocks written 1 MiB further, read expecting their own LBA
expect_ok gen3 $Q --rw write --bs 4k --qd 4 --offset 8M --size 1M --verify-gen 3
# a plain (non-verify) write of femu-bench's untouched (zero) buffers over 4 KiB
bench plain -q -s "$SOCK" --rw write --bs 4k --qd 1 --offset 8M --size 4k
[ "$RC" -eq 0 ] && ok "plain overwrite" || ko "plain overwrite rc=$RC"
expect_fail damaged 1 "LBA 16384" $Q --rw read --bs 4k --qd 1 --offset 8M --size 1M \
	--verify-gen 3
finish
