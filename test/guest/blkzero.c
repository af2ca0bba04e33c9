/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkzero.c - guest helper for the femud guest tests: zero a byte range of
 * a block device with BLKZEROOUT, which the guest kernel turns into
 * VIRTIO_BLK_T_WRITE_ZEROES when the device offers it (busybox has no
 * equivalent).  Built static so it runs in the busybox initramfs.
 *
 * usage: blkzero DEVICE OFFSET LENGTH   (bytes)
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uint64_t range[2];
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE OFFSET LENGTH\n", argv[0]);
		return 2;
	}
	range[0] = strtoull(argv[2], NULL, 0);
	range[1] = strtoull(argv[3], NULL, 0);
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (ioctl(fd, BLKZEROOUT, range) != 0) {
		perror("BLKZEROOUT");
		return 1;
	}
	close(fd);
	return 0;
}
