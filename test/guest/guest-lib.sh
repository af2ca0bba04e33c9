# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test/guest/guest-lib.sh - the host side of the guest protocol, sourced by
# test/guest/guest-run and tools/femu-launch (which builds its own QEMU
# command line from a placement plan): put a job (shell command, files,
# environment) into a work directory, make the initrd and the QEMU boot
# arguments that carry it, and read the guest's result back.
#
# The protocol (guest-init is the guest side): the job is a cpio appended to
# the cached initramfs (/job/run.sh, /job/env, copied files); the guest
# writes the job's stdout, stderr and exit status to three virtio-serial
# ports (org.femud.out, .err, .status) that QEMU writes to files in the work
# directory; the console goes to WORK/console; the guest ends with a reboot
# that -no-reboot turns into QEMU's exit.
# Functions and variables start with gl_ / GL_; it defines nothing else.

GL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# gl_quote WORD: WORD as one single-quoted shell word (for the guest's sh)
gl_quote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

# gl_cmdline ARGS...: a command line to show, quoting the words that need it
gl_cmdline() {
	local w out=()
	for w in "$@"; do
		if [[ $w =~ ^[A-Za-z0-9@%+=:,./_-]+$ ]]; then out+=("$w"); else out+=("$(gl_quote "$w")"); fi
	done
	echo "${out[*]}"
}

# gl_job_init WORK: an empty job in WORK (WORK/job-root becomes the cpio)
gl_job_init() {
	rm -rf "$1/job-root"
	mkdir -p "$1/job-root/job" || return 1
	: >"$1/job-root/job/env"
	: >"$1/job-root/job/run.sh"
}

# gl_job_cmd WORK CMD: the busybox-sh command the guest runs
gl_job_cmd() { printf '%s\n' "$2" >"$1/job-root/job/run.sh"; }

# gl_job_env WORK NAME=VALUE: exported in the guest before the command runs
gl_job_env() {
	local name=${2%%=*}
	[[ $2 == *=* && $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || { echo "bad environment '$2' (NAME=VALUE)" >&2; return 1; }
	echo "export $name=$(gl_quote "${2#*=}")" >>"$1/job-root/job/env"
}

# gl_job_file WORK SRC[:DST]: copy a host file into the guest (default
# /job/NAME; not under /tmp, which the guest mounts over)
gl_job_file() {
	local src=${2%%:*} dst=${2#*:}
	[ "$dst" = "$2" ] && dst=/job/${src##*/}
	[ -f "$src" ] || { echo "--file: no file '$src'" >&2; return 1; }
	[[ $dst == /* && $dst != /tmp/* && $dst != */../* ]] || { echo "--file: bad guest path '$dst'" >&2; return 1; }
	mkdir -p "$1/job-root$(dirname "$dst")" && cp -p "$src" "$1/job-root$dst"
}

# gl_image [guest-image options]: the image directory (built when missing)
gl_image() {
	local out
	out=$("$GL_DIR/guest-image" "$@") || return 1
	tail -n 1 <<<"$out"
}

# gl_boot_args WORK IMG NDISKS [KERNEL-ARGS]: make WORK/initrd (the image's
# initramfs + the job) and set GL_BOOT_ARGS to the QEMU arguments that boot
# it and collect the result (kernel, initrd, command line, console, ports).
# The guest waits for NDISKS virtio disks before it runs the job.
gl_boot_args() {
	local work=$1 img=$2 ndisks=$3 extra=${4:-} kernel p
	(cd "$work/job-root" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$work/job.cpio" ||
		return 1
	cat "$img/initramfs.cpio" "$work/job.cpio" >"$work/initrd" || return 1
	kernel=$img/vmlinuz
	[ -f "$img/vmlinux" ] && [ "${FEMUD_GUEST_NO_PVH:-0}" != 1 ] && kernel=$img/vmlinux
	GL_BOOT_ARGS=(-kernel "$kernel" -initrd "$work/initrd" -no-reboot
		-append "console=ttyS0 quiet panic=-1 femud_guest.disks=$ndisks${extra:+ $extra}"
		-chardev "file,id=glcon,path=$work/console" -serial chardev:glcon
		-device "virtio-serial-pci,id=glser")
	for p in out err status; do
		: >"$work/$p"
		GL_BOOT_ARGS+=(-chardev "file,id=gl$p,path=$work/$p"
			-device "virtserialport,bus=glser.0,chardev=gl$p,name=org.femud.$p")
	done
	: >"$work/console"
}

# gl_status WORK: print the job's exit status; fails when the guest did not
# report one (it never ran the job, or died first)
gl_status() {
	local st
	st=$(head -n 1 "$1/status" 2>/dev/null)
	[[ $st =~ ^[0-9]+$ ]] || return 1
	echo "$st"
}
