#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# persist_image.sh - device images (image=FILE): a NoSSD device with 16 MiB
# of 64 written is saved on SIGUSR2 (sparse) while
# writes go on, and a new femud loads it and reads every sector back (also
# with --poll-mode adaptive, the poller asleep when the save starts); a
# BlackBox device saved after preconditioning gives the same GC counts and
# write amplification on two starts from the image with the same workload;
# truncated, corrupted (chunk checksum), wrong-version and wrong-geometry
# images are refused with exit status 2 and the image unchanged; a save to
# a file system without room fails with a clear message and leaves the old
# image intact (a small tmpfs mounted here, root only).
# $1: femu-bench.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

IMG=$T/img
SOCK=$T/dev.sock
# wait_log FILE NEEDLE: bounded wait for a line in a log
TO="--timeout 30000" # femu-bench: generous bounds on a loaded machine
wait_log() {
	for _ in $(seq 1 600); do grep -q -- "$2" "$1" && return 0; sleep 0.1; done
	echo "no '$2' in $1:"; cat "$1"; return 1
}
start() { start_femud_opts "$1" --lcores 0 --dev "path=$SOCK,$2"; }

# --- NoSSD: save while writing, load, read back ---
start n1 "devsz_mb=64,image=$IMG" || { ko start; finish; }
expect_ok fill -q -s "$SOCK" --rw write --bs 1m --qd 4 --size 16m --verify --verify-gen 5 $TO
# writes to another 16 MiB go on during the save (copy-on-write keeps the image consistent)
"$BENCH" -q -s "$SOCK" --rw randwrite --bs 4k,64k --qd 16 --offset 32m --size 16m --verify \
	--verify-gen 6 --time 3 $TO >"$T/bg.out" 2>&1 &
bg=$!
sleep 0.5
kill -USR2 "$FEMUD_PID"
wait_log "$T/n1.log" "image saved to $IMG" && ok "image saved on SIGUSR2" || ko "no save"
wait "$bg" && ok "writes went on during the save" || ko "writes during the save failed"
size=$(stat -c %s "$IMG")
[ "$size" -ge $((16 << 20)) ] && [ "$size" -le $((34 << 20)) ] &&
	ok "sparse image of a 64 MiB device: $size bytes for 16 MiB written + at most 16 MiB during the save" ||
	ko "image size $size"
stop_femud
start n2 "devsz_mb=64,image=$IMG" || { ko "start from the image"; finish; }
grep -q "image loaded from $IMG" "$T/n2.log" && ok "image loaded" || ko "no load line"
expect_ok readback -q -s "$SOCK" --rw read --bs 1m --qd 4 --size 16m --verify --verify-gen 5 $TO
stop_femud

# --- a save with adaptive polling: the sleeping poller is woken to park ---
AIMG=$T/adaptive.img
start_femud_opts a1 --lcores 0 --poll-mode adaptive --dev "path=$SOCK,devsz_mb=64,image=$AIMG" ||
	{ ko "start (adaptive)"; finish; }
expect_ok afill -q -s "$SOCK" --rw write --bs 1m --qd 4 --size 8m --verify --verify-gen 4 $TO
sleep 0.5 # idle far longer than --idle-us: the poller sleeps
kill -USR2 "$FEMUD_PID"
wait_log "$T/a1.log" "image saved to $AIMG" && ok "saved with --poll-mode adaptive (poller asleep)" ||
	ko "no save with --poll-mode adaptive"
stop_femud
start a2 "devsz_mb=64,image=$AIMG" || { ko "start from the adaptive image"; finish; }
expect_ok areadback -q -s "$SOCK" --rw read --bs 1m --qd 4 --size 8m --verify --verify-gen 4 $TO
stop_femud

# --- bad images: exit 2, image unchanged ---
refuse() { # NAME NEEDLE DEVKEYS
	local name=$1 needle=$2 keys=$3 sum rc
	sum=$(sha256sum "$IMG" | cut -d' ' -f1)
	timeout 60 "$FEMUD" --no-huge --rpc none --lcores 0 --dev "path=$SOCK,$keys,image=$IMG" >"$T/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$needle" "$T/$name.log" &&
		[ "$(sha256sum "$IMG" | cut -d' ' -f1)" = "$sum" ]; then
		ok "$name: exit 2, '$needle', image unchanged"
	else
		ko "$name: exit $rc"; cat "$T/$name.log"
	fi
}
cp "$IMG" "$T/good"
refuse geometry "--dev asks for 33554432 bytes (devsz_mb=32); not loaded" "devsz_mb=32"
truncate -s $((size - 4096)) "$IMG"
refuse truncated "truncated or extended" "devsz_mb=64"
cp "$T/good" "$IMG"
data_off=$(od -An -t u8 -j 80 -N 8 "$IMG" | tr -d ' ')
printf 'Z' | dd of="$IMG" bs=1 seek=$((data_off + 4000)) conv=notrunc status=none
refuse corrupt "chunk 0 (device bytes 0-1048575) checksum mismatch (corrupted)" "devsz_mb=64"
cp "$T/good" "$IMG"
printf '\x07' | dd of="$IMG" bs=1 seek=8 conv=notrunc status=none
refuse version "format version 7, this femud reads version 1" "devsz_mb=64"
cp "$T/good" "$IMG"
printf 'X' | dd of="$IMG" bs=1 seek=200 conv=notrunc status=none
refuse header "header checksum mismatch (corrupted)" "devsz_mb=64"
cp "$T/good" "$IMG"

# --- BlackBox: the same workload from one image twice gives the same GC and WA ---
BB="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"
BB+=",pg_rd_lat=2000,pg_wr_lat=5000,blk_er_lat=20000,queues=1"
BB+=",gc_thres_pcent=90,gc_thres_pcent_high=90" # foreground GC only: no wall-clock in GC
BIMG=$T/bb.img
start b0 "$BB,image=$BIMG" || { ko "bbssd start"; finish; }
bsize=$(grep -o 'serving [^ ]* (bbssd, [0-9]* bytes' "$T/b0.log" | grep -o '[0-9]* bytes' | cut -d' ' -f1)
expect_ok bfill -q -s "$SOCK" --rw write --bs 64k --qd 8 --size "$bsize" --verify --verify-gen 2 $TO
expect_ok bage -q -s "$SOCK" --rw randwrite --bs 4k --qd 8 --ios 8000 --seed 3 --verify --verify-gen 2 $TO
kill -USR2 "$FEMUD_PID"
wait_log "$T/b0.log" "image saved to $BIMG" || { ko "bbssd save"; finish; }
stop_femud
stat_of() { awk -v k="$2" '$1 == k { v = $2 } END { print v }' "$T/$1.log"; }
for r in 1 2; do
	start "b$r" "$BB,image=$BIMG" || { ko "bbssd start $r"; finish; }
	grep -q "image loaded from $BIMG" "$T/b$r.log" || ko "run $r did not load the image"
	expect_ok "bwork$r" -q -s "$SOCK" --rw randwrite --bs 4k,16k --qd 8 --ios 6000 --seed 11 --verify --verify-gen 3 $TO
	stop_femud
done
for k in gc_runs nand_write_pages block_erases write_amplification host_write_pages; do
	a=$(stat_of b1 $k) b=$(stat_of b2 $k)
	[ -n "$a" ] && [ "$a" = "$b" ] && ok "same $k from one image: $a" || ko "$k: $a vs $b"
done
g0=$(stat_of b0 gc_runs) g1=$(stat_of b1 gc_runs)
[ "${g1:-0}" -gt "${g0:-0}" ] && ok "GC ran in the runs from the image ($g0 -> $g1)" ||
	ko "gc_runs $g0 -> $g1"

# --- no room during a save: clear error, old image intact ---
if [ "$(id -u)" = 0 ] && mkdir "$T/small" && mount -t tmpfs -o size=40m femud-persist-img "$T/small" 2>/dev/null; then
	SIMG=$T/small/img
	start s1 "devsz_mb=256,image=$SIMG" || { ko "start (small)"; umount "$T/small"; finish; }
	expect_ok small8 -q -s "$SOCK" --rw write --bs 1m --qd 4 --size 8m --verify --verify-gen 8 $TO
	kill -USR2 "$FEMUD_PID"
	wait_log "$T/s1.log" "image saved to $SIMG" || ko "small save"
	sum=$(sha256sum "$SIMG" | cut -d' ' -f1)
	expect_ok small64 -q -s "$SOCK" --rw write --bs 1m --qd 4 --size 64m --verify --verify-gen 9 $TO
	kill -USR2 "$FEMUD_PID"
	if wait_log "$T/s1.log" "image save to $SIMG failed: No space left on device; the old image is intact" &&
		[ "$(sha256sum "$SIMG" | cut -d' ' -f1)" = "$sum" ] && [ "$(ls "$T/small")" = img ]; then
		ok "no room: clear error, old image intact, no temp file left"
	else
		ko "no room"; ls -la "$T/small"
	fi
	stop_femud
	umount "$T/small"
else
	echo "SKIP: no-room case (needs root to mount a small tmpfs)"
fi
finish
