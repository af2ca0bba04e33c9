#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# persist_medium.sh - mem_path files that do not fit: a medium made for other
# --dev options (devsz_mb, femu_mode, secsz, a BlackBox geometry key), a
# BlackBox state no kill can leave, a
# truncated one, one with a corrupted header (checksum) or another format
# version, and a file that is not a medium are each refused with exit
# status 2 and a message naming the difference, the file byte for byte
# unchanged; format=1 makes it anew; a file system without room (a small
# tmpfs mounted here, root only) gives a clear error and leaves no file.
# $1: femu-bench.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

M=$(mktemp -u /dev/shm/femud-persist-medium.XXXXXX) # tmpfs: no writeback stalls under load
trap 'cleanup; rm -f "$M" "$M.nossd"' EXIT
SOCK=$T/dev.sock
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"

# refuse NAME NEEDLE DEVKEYS: femud must exit 2 naming NEEDLE, $M unchanged
refuse() {
	local name=$1 needle=$2 keys=$3 sum
	sum=$(sha256sum "$M" | cut -d' ' -f1)
	timeout 60 "$FEMUD" --no-huge --rpc none --lcores 0 --dev "path=$SOCK,$keys,mem_path=$M" \
		>"$T/$name.log" 2>&1
	local rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$needle" "$T/$name.log" &&
		[ "$(sha256sum "$M" | cut -d' ' -f1)" = "$sum" ]; then
		ok "$name: exit 2, '$needle', file unchanged"
	else
		ko "$name: exit $rc"; cat "$T/$name.log"
	fi
}

start_femud_opts mk --lcores 0 --dev "path=$SOCK,devsz_mb=16,mem_path=$M" || { ko start; finish; }
expect_ok write -q -s "$SOCK" --rw write --bs 64k --qd 4 --verify --verify-gen 3
stop_femud
cp "$M" "$T/good"
start_femud_opts again --lcores 0 --dev "path=$SOCK,devsz_mb=16,mem_path=$M" || ko restart
expect_ok readback -q -s "$SOCK" --rw read --bs 64k --qd 4 --verify --verify-gen 3
stop_femud
refuse size "devsz_mb=16), --dev asks for 33554432 bytes (devsz_mb=32)" "devsz_mb=32"
refuse secsz "made with secsz=512, --dev has secsz=4096" "devsz_mb=16,secsz=4096"
refuse mode "femu_mode=2 (nossd) device, --dev has femu_mode=1" "$BB"

size=$(stat -c %s "$M")
hdr=$((size - 4096))
printf '\x09' | dd of="$M" bs=1 seek=$((hdr + 8)) conv=notrunc status=none
refuse version "format version 9, this femud reads version 1" "devsz_mb=16"
cp "$T/good" "$M"
printf 'X' | dd of="$M" bs=1 seek=$((hdr + 100)) conv=notrunc status=none
refuse corrupt "header checksum mismatch (corrupted)" "devsz_mb=16"
cp "$T/good" "$M"
truncate -s $((size - 8192)) "$M"
refuse truncated "no femud medium header (not a medium, or truncated" "devsz_mb=16"
head -c 1000000 /dev/urandom >"$M"
refuse notmedium "no femud medium header (not a medium, or truncated: 1000000 bytes)" "devsz_mb=16"
cp "$T/good" "$M"
truncate -s $((size + 4096)) "$M"
dd if="$T/good" of="$M" bs=4096 skip=$((hdr / 4096)) seek=$((hdr / 4096 + 1)) count=1 conv=notrunc status=none
refuse extended "its header says $size (truncated or extended)" "devsz_mb=16"

# a BlackBox medium and another geometry
cp "$T/good" "$M.nossd"
rm -f "$M"
start_femud_opts bb --lcores 0 --dev "path=$SOCK,$BB,mem_path=$M" || { ko "bbssd start"; finish; }
stop_femud
refuse geometry "made with luns_per_ch=2, --dev has luns_per_ch=4" "${BB/luns_per_ch=2/luns_per_ch=4}"
# timing keys are not part of the layout: another pg_rd_lat reuses it
start_femud_opts bb2 --lcores 0 --dev "path=$SOCK,$BB,pg_rd_lat=1000,mem_path=$M" &&
	grep -q reused "$T/bb2.log" && ok "other NAND times reuse the medium" || ko "pg_rd_lat refused"
stop_femud
# BlackBox state damaged beyond what a kill leaves: refused, untouched
bsize=$(stat -c %s "$M")
soff=$(od -An -t u8 -j $((bsize - 4096 + 48)) -N 8 "$M" | tr -d ' ')
cp "$M" "$T/bbgood"
head -c 8 /dev/zero | dd of="$M" bs=1 seek="$soff" conv=notrunc status=none
refuse bbstate "BlackBox state was never initialised or is corrupted (bad magic)" "$BB"
cp "$T/bbgood" "$M"

# format=1 makes it anew (another size now fits)
start_femud_opts fmt --lcores 0 --dev "path=$SOCK,devsz_mb=32,mem_path=$M,format=1" &&
	grep -q "made anew" "$T/fmt.log" && ok "format=1 makes it anew" || ko "format=1"
stop_femud
timeout 30 "$FEMUD" --no-huge --rpc none --lcores 0 --dev "path=$SOCK,devsz_mb=16,format=1" >"$T/nofile.log" 2>&1
[ $? -eq 2 ] && grep -q "only with mem_path" "$T/nofile.log" && ok "format=1 needs mem_path" ||
	ko "format without mem_path"

# no room: a 24 MiB tmpfs cannot hold a 64 MiB medium
if [ "$(id -u)" = 0 ] && mkdir "$T/small" && mount -t tmpfs -o size=24m femud-persist "$T/small" 2>/dev/null; then
	timeout 60 "$FEMUD" --no-huge --rpc none --lcores 0 --dev "path=$SOCK,devsz_mb=64,mem_path=$T/small/m" \
		>"$T/nospace.log" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "tmpfs holding it cannot hold 64 MiB" "$T/nospace.log" &&
		[ ! -e "$T/small/m" ]; then
		ok "no room on the file system: clear error, no file left"
	else
		ko "no room: exit $rc"; cat "$T/nospace.log"; ls -la "$T/small"
	fi
	umount "$T/small"
else
	echo "SKIP: no-room case (needs root to mount a small tmpfs)"
fi
finish
