#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# qemu10.sh - run one guest test (test/guest/*.sh, the rest of the arguments)
# against QEMU 10.0 from bookworm-backports with a 6.12 guest kernel, as
# unpacked / installed by tools/qemu-backports (suite guest-qemu10).  Skips
# (77) when tools/qemu-backports has not prepared them.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
env_lines=$("$SRCDIR/tools/qemu-backports" --print-env) || {
	echo "SKIP: QEMU 10 / kernel 6.12 not prepared (run tools/qemu-backports as root)"
	exit 77
}
while read -r kv; do export "${kv?}"; done <<<"$env_lines"
echo "guest test under $("$FEMU_GUEST_QEMU" --version | head -1), kernel $FEMU_GUEST_KVER"
exec "$@"
