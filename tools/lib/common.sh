# SPDX-License-Identifier: GPL-2.0-or-later
# tools/lib/common.sh - shared by tools/quickstart and tools/run-tests:
# the Debian 12 package list, the idempotent installer and the build step.
# Source it; it defines functions only.

FEMUD_PACKAGES="build-essential pkg-config meson ninja-build libdpdk-dev dpdk-doc libnuma-dev
  libhwloc-dev hwloc liburing-dev libisal-dev libcriterion-dev libjansson-dev qemu-system-x86 qemu-utils fio
  busybox-static cpio xz-utils linux-image-amd64 jq procps util-linux clang-format python3
  clang libclang-rt-14-dev python3-matplotlib scdoc libsystemd-dev systemd debhelper libvirt-clients
  linux-perf
  libvirt-daemon-system libvirt-daemon-driver-qemu"

femud_log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }

# Install whatever is missing (root only); a non-root user gets the command to run.
femud_install_deps() {
	local missing=() p
	for p in $FEMUD_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && { femud_log "all packages present"; return 0; }
	if [ "$(id -u)" != 0 ]; then
		femud_log "missing packages: ${missing[*]}"
		femud_log "run as root: apt-get install -y ${missing[*]}"
		return 1
	fi
	femud_log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configure (once) and build into $1 (default: build).
femud_build() {
	local dir=${1:-build} top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cd "$top" || return 1
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" >/dev/null || return 1
	fi
	ninja -C "$dir" -j"$(nproc)" >/dev/null || ninja -C "$dir" -j1
}

# Reserve 2 MiB hugepages for $1 MiB on top of what is already free, when the
# machine has the memory to spare.  Prints nothing useful on failure: femud
# falls back to normal pages by itself.
femud_reserve_hugepages() {
	local want_mb=$1 free_pages total avail_kb
	[ "$(id -u)" = 0 ] || return 0
	free_pages=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
	[ $((free_pages * 2)) -ge "$want_mb" ] && return 0
	avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
	[ $((avail_kb / 1024)) -gt $((want_mb * 3)) ] || { femud_log "not enough free memory for ${want_mb} MiB of hugepages"; return 0; }
	total=$(cat /proc/sys/vm/nr_hugepages)
	echo $((total + want_mb / 2 - free_pages)) >/proc/sys/vm/nr_hugepages
	mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages; } 2>/dev/null
	femud_log "hugepages: $(cat /proc/sys/vm/nr_hugepages) x 2 MiB reserved ($(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages) free)"
}

# Wait (bounded) until femud prints "femud: ready" into log $1; $2 = pid.
femud_wait_ready() {
	local log=$1 pid=$2 i
	for i in $(seq 1 300); do
		grep -q '^femud: ready' "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
