#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# qemu10.sh - run one guest test (test/guest/*.sh, the rest of the arguments)
# against QEMU 10.0 from bookworm-backports with a 6.12 guest kernel, as
# unpacked / installed by test/guest/qemu-backports (suite guest-qemu10).
# FAILS when they are not prepared: a test that cannot run is not a pass.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
env_lines=$("$SRCDIR/test/guest/qemu-backports" --print-env) || {
	echo "FAIL: QEMU 10 / kernel 6.12 not prepared (run test/guest/qemu-backports as root)"
	exit 1
}
while read -r kv; do export "${kv?}"; done <<<"$env_lines"
echo "guest test under $("$FEMUD_GUEST_QEMU" --version | head -1), kernel $FEMUD_GUEST_KVER"
exec "$@"
