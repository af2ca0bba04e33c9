#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sock_owner.sh - socket ownership and allowed peers: a
# frontend running as another uid cannot reach a default (0600, root)
# socket; with sock_owner=UID:GID it can, without a world-writable socket;
# femud logs each frontend's pid and uid; with allow_uid a peer of another
# uid is closed with a log line while the allowed one keeps being served.
# Needs root (to switch uid with setpriv); skipped otherwise.
# Args: femu-bench path.  Env: FEMUD.
. "$(dirname "$0")/femu_bench_lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: needs root and setpriv to connect as another uid"
	exit 77
fi
# an unused uid/gid (no passwd entry needed: femud takes numbers)
U=$((40000 + $$ % 20000))
G=$U
chmod 0755 "$T" # the other uid must reach the socket's directory
as_user() { setpriv --reuid="$U" --regid="$G" --clear-groups "$BENCH" "$@"; }
IO="-q --rw write --bs 4k --qd 4 --size 1M --verify --verify-gen 3 --timeout 5000"
RD="-q --rw read --bs 4k --qd 4 --size 1M --verify --verify-gen 3 --timeout 5000"

# 1. default socket: root's, 0600: the other uid is refused by the kernel
start_femud d ",devsz_mb=16" || { ko "femud start"; finish; }
[ "$(stat -c '%u %a' "$SOCK")" = "0 600" ] && ok "default socket root-owned 0600" ||
	ko "default socket: $(stat -c '%u %a' "$SOCK")"
if as_user -s "$SOCK" $IO >"$T/d.out" 2>&1; then ko "uid $U reached a 0600 root socket"
else ok "uid $U refused by a 0600 root socket ($(tail -1 "$T/d.out"))"; fi
stop_femud

# 2. sock_owner + allow_uid: the owner connects, is logged, and is served
start_femud o ",devsz_mb=16,sock_owner=$U:$G,sock_mode=0600,allow_uid=$U" ||
	{ ko "femud start"; finish; }
[ "$(stat -c '%u %g %a' "$SOCK")" = "$U $G 600" ] && ok "socket owned by $U:$G, mode 0600" ||
	ko "socket owner/mode: $(stat -c '%u %g %a' "$SOCK")"
if as_user -s "$SOCK" $IO >"$T/o.out" 2>&1 && as_user -s "$SOCK" $RD >>"$T/o.out" 2>&1; then
	ok "uid $U served (write, then verified read by a new connection)"
else ko "uid $U not served: $(tail -2 "$T/o.out")"; fi
grep -qE "frontend pid [0-9]+ uid $U gid $G connected" "$T/o.log" && ok "femud logged the peer's pid and uid" ||
	ko "no peer log line: $(grep -i frontend "$T/o.log" | tail -2)"

# 3. a peer of another uid (root here) is closed with a log line
if "$BENCH" -s "$SOCK" $IO >"$T/r.out" 2>&1; then ko "uid 0 served despite allow_uid=$U"
else ok "uid 0 refused ($(tail -1 "$T/r.out"))"; fi
grep -qE "connection refused: frontend pid [0-9]+ uid 0 .*not in allow_uid" "$T/o.log" &&
	ok "femud logged the refusal" || ko "no refusal log line"
# 4. and the allowed uid is still served afterwards
if as_user -s "$SOCK" $RD >"$T/o2.out" 2>&1; then ok "uid $U still served (verified read)"
else ko "uid $U not served after a refusal: $(tail -2 "$T/o2.out")"; fi
kill -0 "$FEMUD_PID" 2>/dev/null && ok "femud alive" || ko "femud died"
stop_femud

# 5. bad values name the key
for bad in "sock_owner=no_such_user_femud" "sock_owner=0:no_such_group_femud" "allow_uid=" \
	"allow_uid=0:no_such_user_femud"; do
	if "$FEMUD" --rpc none --dry-run --dev "path=$T/x.sock,devsz_mb=16,$bad" >"$T/bad.out" 2>&1; then
		ko "$bad accepted"
	else
		key=${bad%%=*}
		grep -q "'$key'" "$T/bad.out" && ok "$bad refused naming $key" ||
			ko "$bad: $(cat "$T/bad.out")"
	fi
done
finish
