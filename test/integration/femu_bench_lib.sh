# SPDX-License-Identifier: GPL-2.0-or-later
# femu_bench_lib.sh - shared helpers of the femu-bench integration tests
# (sourced): start femud on a temp socket, run femu-bench, PASS/FAIL
# bookkeeping.  Env: FEMUD (femud path); $1 of the test: femu-bench path.
set -u
FEMUD=${FEMUD:-}
BENCH=${1:-}
# A test that needs no femud sets NEED_FEMUD=0 before sourcing this file.
if [ -z "$BENCH" ] || [ ! -x "$BENCH" ] ||
	{ [ "${NEED_FEMUD:-1}" = 1 ] && { [ -z "$FEMUD" ] || [ ! -x "$FEMUD" ]; }; }; then
	# a test that cannot run fails: it must not pass by skipping
	echo "FAIL: femud ('$FEMUD') or femu-bench ('$BENCH') not built"
	exit 1
fi
T=$(mktemp -d /tmp/femu-bench-it.XXXXXX)
pass=0 fail=0
pids=()
# FEMU_BENCH_KEEP_FAILED=DIR: a test that failed leaves its $T (femud's log,
# femu-bench's output) in DIR instead of deleting it (stress loops).
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	if [ -n "${FEMU_BENCH_KEEP_FAILED:-}" ] && [ "$fail" -gt 0 ]; then
		mkdir -p "$FEMU_BENCH_KEEP_FAILED" && cp -a "$T" "$FEMU_BENCH_KEEP_FAILED/" &&
			echo "kept: $FEMU_BENCH_KEEP_FAILED/$(basename "$T")"
	fi
	rm -rf "$T"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

# start_femud NAME DEVARGS...: femud on one lcore with $T/NAME.sock; sets FEMUD_PID, SOCK
start_femud() {
	local name=$1; shift
	SOCK=$T/$name.sock
	start_femud_opts "$name" --lcores 0 --dev "path=$SOCK$*" && [ -S "$SOCK" ]
}

# start_femud_opts NAME OPTIONS...: femud --no-huge OPTIONS, log in $T/NAME.log,
# control socket $T/NAME.rpc (unless OPTIONS has --rpc), wait until it is ready;
# sets FEMUD_PID and RPC (the control socket, for femuctl -s)
start_femud_opts() {
	local name=$1; shift
	local rpc=(--rpc "$T/$name.rpc")
	[[ " $* " == *" --rpc "* ]] && rpc=()
	RPC=$T/$name.rpc
	: >"$T/$name.log" # now: the job's own '>' may come after the first grep (a restart)
	"$FEMUD" --no-huge "${rpc[@]}" "$@" >"$T/$name.log" 2>&1 &
	FEMUD_PID=$!
	pids+=("$FEMUD_PID")
	for _ in $(seq 1 200); do
		grep -q '^femud: ready' "$T/$name.log" && return 0
		kill -0 "$FEMUD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "femud did not start:"; cat "$T/$name.log"
	return 1
}

# femud_threads PID: each thread's name, state, wait channel, CPU time and
# run-queue wait (schedstat, ns) and how both grew over the next second (a
# starved thread waits ~1000 ms of it, a looping one runs), kernel stack,
# and with gdb the user stacks (where a femud that does not answer or stop
# is stuck, or whether it is starved)
femud_threads() {
	local t
	declare -A s0
	for t in /proc/"$1"/task/*; do s0[$t]=$(cat "$t/schedstat" 2>/dev/null); done
	sleep 1
	for t in /proc/"$1"/task/*; do
		[ -r "$t/stat" ] || continue
		local s1 d="" a b
		s1=$(cat "$t/schedstat" 2>/dev/null)
		if [ -n "${s0[$t]:-}" ] && [ -n "$s1" ]; then
			read -ra a <<<"${s0[$t]}"
			read -ra b <<<"$s1"
			d=", in 1 s: ran $(((b[0] - a[0]) / 1000000)) ms, waited $(((b[1] - a[1]) / 1000000)) ms"
		fi
		echo "femud thread ${t##*/} $(cat "$t/comm" 2>/dev/null): state" \
			"$(cut -d' ' -f3 "$t/stat" 2>/dev/null), wchan $(cat "$t/wchan" 2>/dev/null)," \
			"syscall $(cut -d' ' -f1 "$t/syscall" 2>/dev/null)," \
			"schedstat (run, wait, slices) $s1$d"
		sed -n '1,8s/^/    /p' "$t/stack" 2>/dev/null
	done
	command -v gdb >/dev/null &&
		timeout 30 gdb -batch -p "$1" -ex "thread apply all bt 12" 2>/dev/null | grep -E '^Thread|^#'
}

stop_femud() {
	kill "$FEMUD_PID" 2>/dev/null
	for _ in $(seq 1 50); do kill -0 "$FEMUD_PID" 2>/dev/null || return 0; sleep 0.1; done
	echo "femud did not stop within 5 s of SIGTERM:"
	femud_threads "$FEMUD_PID"
	kill -9 "$FEMUD_PID" 2>/dev/null
}

# bench NAME ARGS...: run femu-bench (bounded), output in $T/NAME.out/.err, status in RC
bench() {
	local name=$1; shift
	timeout 300 "$BENCH" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}

# expect_ok NAME ARGS...: femu-bench must exit 0
expect_ok() {
	local name=$1
	bench "$@"
	if [ "$RC" -eq 0 ]; then ok "$name"; else
		ko "$name (exit $RC)"
		cat "$T/$name.out" "$T/$name.err"
		[ -n "${FEMUD_PID:-}" ] && femud_threads "$FEMUD_PID"
	fi
}

# expect_fail NAME STATUS NEEDLE ARGS...: exit STATUS and NEEDLE in stderr
expect_fail() {
	local name=$1 status=$2 needle=$3; shift 3
	bench "$name" "$@"
	if [ "$RC" -eq "$status" ] && grep -qF -- "$needle" "$T/$name.err"; then ok "$name"; else
		ko "$name (exit $RC, expected $status with '$needle')"; cat "$T/$name.err"; fi
}

finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

# A small BlackBox device's --dev keys (4 queues, short NAND latencies): GC runs in seconds.
BB_SMALL="femu_mode=1,nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25,queues=4"
BB_SMALL="$BB_SMALL,pg_rd_lat=1000,pg_wr_lat=2000,blk_er_lat=5000"

# femud_refused CTL SOCK: requests femud refused on the device at SOCK (answered IOERR or
# UNSUPP, plus queues it stopped), from femuctl stats over $RPC.
femud_refused() {
	"$1" -s "$RPC" stats "$2" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["devices"][0]["totals"]
print(t["errors"] + t["broken"])'
}
