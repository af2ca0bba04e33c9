#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# place_plan.sh - femu-place against synthetic topologies
# (1, 2, 4 and 8 nodes, SMT and not, sub-NUMA clustering, machines too
# small) and this host. Every plan is checked independently of femu-place,
# with hwloc-calc answering which core/package/node a CPU is on:
#   - guest and femud on different packages when there are two or more;
#   - no CPU used twice; one physical core per vCPU and per poller; no poller
#     core shared with a vCPU (SMT siblings included);
#   - vCPUs on the guest's nodes, pollers on the backend node's package;
#   - hugepage counts add up (guest + femud per node, the --apply targets);
#   - the QEMU options (host-nodes/policy, share=on, num-queues = vCPUs);
#   - the femud command line is accepted by femud --dry-run.
# Usage: place_plan.sh FEMU_PLACE   Env: FEMUD (path of femud).
set -u
PLACE=${1:?usage: place_plan.sh FEMU_PLACE}
FEMUD=${FEMUD:-}
pass=0 fail=0
T=$(mktemp -d /tmp/place-plan.XXXXXX)
trap 'rm -rf "$T"' EXIT

ok() { pass=$((pass + 1)); echo "PASS: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
	local d=$1; shift
	if "$@"; then ok "$d"; else ko "$d"; fi
}

# hw TOPO WHAT CPU -> logical core/package index, or OS node index, of an OS CPU
hw() {
	case $2 in
	numa) hwloc-calc -i "$1" --pi "pu:$3" --po --intersect numa ;;
	*) hwloc-calc -i "$1" --pi "pu:$3" --intersect "$2" ;;
	esac
}

GIB=$((1 << 30))
MIB=$((1 << 20))

# check_cpus NAME TOPO JSON: the CPU, core, package and node rules
check_cpus() {
	local name=$1 topo=$2 j=$3
	local pkgs gnodes fnode gpkg fpkg cpu c
	local -a vcpu fcpu vcores fcores
	pkgs=$(jq .topology.packages "$j")
	mapfile -t vcpu < <(jq '.guest.cpus[]' "$j")
	mapfile -t fcpu < <(jq '.femud.cpus[]' "$j")
	gnodes=" $(jq -r '.guest.nodes | map(tostring) | join(" ")' "$j") "
	fnode=$(jq .femud.mbe_node "$j")
	check "$name: ${#vcpu[@]} vCPUs pinned" [ "${#vcpu[@]}" -eq "$(jq .request.vcpus "$j")" ]
	check "$name: no CPU used twice" \
		[ "$(printf '%s\n' "${vcpu[@]}" "${fcpu[@]}" | sort -u | wc -l)" -eq $((${#vcpu[@]} + ${#fcpu[@]})) ]
	vcores=() fcores=()
	for cpu in "${vcpu[@]}"; do vcores+=("$(hw "$topo" core "$cpu")"); done
	for cpu in $(jq '.femud.poller_cpus[]' "$j"); do fcores+=("$(hw "$topo" core "$cpu")"); done
	check "$name: one physical core per vCPU" \
		[ "$(printf '%s\n' "${vcores[@]}" | sort -u | wc -l)" -eq "${#vcores[@]}" ]
	check "$name: one physical core per poller" \
		[ "$(printf '%s\n' "${fcores[@]}" | sort -u | wc -l)" -eq "${#fcores[@]}" ]
	local shared=0
	for cpu in $(jq '.femud.cpus[]' "$j"); do
		c=$(hw "$topo" core "$cpu")
		printf '%s\n' "${vcores[@]}" | grep -qx "$c" && shared=1
	done
	check "$name: no femud lcore shares a core (or SMT sibling) with a vCPU" [ $shared -eq 0 ]
	local off=0
	for cpu in "${vcpu[@]}"; do [[ $gnodes == *" $(hw "$topo" numa "$cpu") "* ]] || off=1; done
	check "$name: vCPUs on the guest's node(s)$gnodes" [ $off -eq 0 ]
	fpkg=$(hwloc-calc -i "$topo" --pi "node:$fnode" --intersect package)
	off=0
	for cpu in "${fcpu[@]}"; do [ "$(hw "$topo" package "$cpu")" = "$fpkg" ] || off=1; done
	check "$name: femud lcores on the package of backend node $fnode" [ $off -eq 0 ]
	if [ "$pkgs" -ge 2 ]; then
		gpkg=$(hw "$topo" package "${vcpu[0]}")
		check "$name: guest (package $gpkg) and femud (package $fpkg) on different packages" \
			[ "$gpkg" != "$fpkg" ]
		check "$name: isolation is 'socket'" [ "$(jq -r .isolation "$j")" = socket ]
	fi
	# emulator threads never on femud's cores
	shared=0
	for cpu in $(jq '.guest.emulator_cpus[]' "$j"); do
		c=$(hw "$topo" core "$cpu")
		printf '%s\n' "${fcores[@]}" | grep -qx "$c" && shared=1
	done
	check "$name: QEMU's other threads stay off poller cores" [ $shared -eq 0 ]
}

# check_hugepages NAME JSON: per-node counts add up and --apply reserves them
check_hugepages() {
	local name=$1 j=$2
	local mem devsz devs eal gp fp gn need_g need_f want_f n
	mem=$(jq .guest.mem "$j"); gp=$(jq .guest.page_size "$j"); fp=$(jq .femud.page_size "$j")
	devsz=$(jq .request.devsz "$j"); devs=$(jq .request.devices "$j"); eal=$(jq .request.eal_mem "$j")
	gn=$(jq '.guest.nodes | length' "$j")
	need_g=$(jq '[.hugepages[].need_guest] | add' "$j")
	need_f=$(jq '[.hugepages[].need_femud] | add' "$j")
	want_f=$(( devs * ((devsz + fp - 1) / fp) + (eal + fp - 1) / fp ))
	check "$name: guest hugepages cover its RAM ($need_g x $gp >= $mem)" \
		[ $((need_g * gp)) -ge "$mem" -a $(((need_g - gn) * gp)) -lt "$mem" ]
	check "$name: femud hugepages = $devs devices + EAL heap ($need_f = $want_f)" [ "$need_f" -eq "$want_f" ]
	check "$name: femud's pages are all on backend node" \
		[ "$(jq '.femud.mbe_node as $f | [.hugepages[] | select(.need_femud > 0) | .node] | unique == [$f]' "$j")" = true ]
	check "$name: need = guest + femud on every node" \
		[ "$(jq '[.hugepages[] | .need == .need_guest + .need_femud] | all' "$j")" = true ]
	n=$(jq '[.hugepages[] | select(.ok | not)] | length' "$j")
	check "$name: --apply reserves hugepages on the $n short node(s)" \
		[ "$(jq '[.apply[] | select(startswith("echo "))] | length' "$j")" -eq "$n" ]
	local bad=0 line
	while read -r line; do
		grep -qxF -- "$line" <(jq -r '.apply[]' "$j") || bad=1
	done < <(jq -r '.hugepages[] | select(.ok | not) |
		"echo \(.reserved + .need - .free) > \(.sysfs)/nr_hugepages"' "$j")
	check "$name: --apply targets = reserved + need - free" [ $bad -eq 0 ]
}

# check_qemu NAME JSON
check_qemu() {
	local name=$1 j=$2 obj nodes
	obj=$(jq -r '.qemu_args as $a | [range(0; $a | length)] | map(select($a[.] == "-object")) |
		.[0] as $i | $a[$i + 1]' "$j")
	nodes=$(jq -r '.guest.nodes | map("host-nodes=\(.)") | join(",")' "$j")
	check "$name: memory backend bound to the guest's nodes ($nodes)" \
		grep -q "share=on.*$nodes,policy=" <<<"$obj"
	check "$name: one virtqueue per vCPU" \
		[ "$(jq -r '.qemu_args | map(select(startswith("vhost-user-blk-pci"))) | .[0]' "$j" |
			sed 's/.*num-queues=//')" = "$(jq '[.request.vcpus, 64] | min' "$j")" ]
	check "$name: -smp = vCPUs" [ "$(jq -r '.qemu_args[1]' "$j")" = "$(jq .request.vcpus "$j")" ]
}

# femud_accepts NAME JSON HOST: femud --dry-run accepts the printed line.
# For another machine's plan the CPUs and nodes do not exist here, so the line
# is tried with --mbe-node 0 (the lcore list must then parse and fail only on
# CPU existence) and with --lcores 0@<a CPU of ours> (the rest must pass).
femud_accepts() {
	local name=$1 j=$2 host=$3 out rc mycpu
	[ -x "$FEMUD" ] || { ko "$name: FEMUD not set or not executable"; return; }
	local -a argv
	mapfile -t argv < <(jq -r '.femud_argv[1:][]' "$j")
	check "$name: femud_cmdline is femud_argv" \
		[ "$(jq -r '.femud_cmdline' "$j")" = "femud ${argv[*]}" ]
	if [ "$host" = 1 ]; then
		out=$("$FEMUD" --dry-run "${argv[@]}" 2>&1); rc=$?
		if [ $rc -eq 0 ]; then ok "$name: femud --dry-run accepts the line"
		else ko "$name: femud --dry-run rejects the line (rc=$rc: $out)"; fi
		return
	fi
	mycpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
	local -a a1=("${argv[@]}") a2=("${argv[@]}")
	local i
	for i in "${!a1[@]}"; do
		[ "${a1[$i]}" = --mbe-node ] && a1[$((i + 1))]=0 && a2[$((i + 1))]=0
		[ "${a2[$i]}" = --lcores ] && a2[$((i + 1))]="0@$mycpu"
	done
	out=$("$FEMUD" --dry-run "${a1[@]}" 2>&1); rc=$?
	if [ $rc -eq 0 ] || grep -q "does not exist or is not allowed" <<<"$out"; then
		ok "$name: femud parses the --lcores list"
	else ko "$name: femud rejects the --lcores list (rc=$rc: $out)"; fi
	out=$("$FEMUD" --dry-run "${a2[@]}" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then ok "$name: femud --dry-run accepts the --dev options"
	else ko "$name: femud --dry-run rejects the --dev options (rc=$rc: $out)"; fi
}

# plan NAME TOPO ARGS...: run femu-place --json and every check
plan() {
	local name=$1 topo=$2; shift 2
	local j=$T/$name.json rc
	"$PLACE" --topology "$topo" --json "$@" >"$j" 2>"$T/$name.err"; rc=$?
	if [ $rc -ne 0 ] || ! jq -e . "$j" >/dev/null; then
		ko "$name: femu-place failed (rc=$rc): $(cat "$T/$name.err")"
		return 1
	fi
	ok "$name: plan printed"
	check_cpus "$name" "$topo" "$j"
	check_hugepages "$name" "$j"
	check_qemu "$name" "$j"
	femud_accepts "$name" "$j" 0
}

# too_small NAME NEEDLE TOPO ARGS...: exit 1 with a message naming what is missing
too_small() {
	local name=$1 needle=$2 topo=$3 out rc; shift 3
	out=$("$PLACE" --topology "$topo" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 1 ] && grep -q "$needle" <<<"$out"; then ok "$name: exit 1: $out"
	else ko "$name: want exit 1 and '$needle', got rc=$rc: $out"; fi
}

S64=68719476736 S16=17179869184 S8=8589934592

# 2 sockets x 32 cores x 2 PUs, the seeds' machine class
plan 2s32c_smt "pack:2 numa:1(memory=$S64) core:32 pu:2" --vcpus 16 --mem 16G --pollers 8 --devsz 4G --devices 2
# 2 sockets without SMT, 1 GiB pages forced
plan 2s_nosmt_1g "pack:2 numa:1(memory=$S64) core:16 pu:1" --vcpus 8 --mem 8G --pollers 4 --hugepage-size 1G
# 4 nodes with SNC (2 per package)
plan snc4 "pack:2 numa:2(memory=$S16) core:8 pu:2" --vcpus 4 --mem 4G --pollers 2
j=$T/snc4.json
check "snc4: guest and femud nodes differ" [ "$(jq '.guest.node != .femud.mbe_node' "$j")" = true ]
# SNC where the guest needs the whole package: two nodes, interleaved
plan snc_wide "pack:2 numa:2(memory=$S8) core:4 pu:2" --vcpus 6 --mem 4G --pollers 2
j=$T/snc_wide.json
check "snc_wide: guest spans 2 nodes" [ "$(jq '.guest.nodes | length' "$j")" -eq 2 ]
check "snc_wide: interleaved" grep -q 'policy=interleave' <<<"$(jq -r '.qemu_args[5]' "$j")"
# 4 packages without SMT, 8 packages with SMT
plan 4s_nosmt "pack:4 numa:1(memory=$S16) core:8 pu:1" --vcpus 6 --mem 8G --pollers 3
plan 8s_smt "pack:8 numa:1(memory=$S16) core:4 pu:2" --vcpus 3 --mem 2G --pollers 2 --devices 3
# one package, two nodes: node isolation, and it says socket isolation is impossible
plan 1s2n "pack:1 numa:2(memory=$S16) core:4 pu:2" --vcpus 2 --mem 2G --pollers 2
j=$T/1s2n.json
check "1s2n: isolation 'node', different nodes" [ "$(jq '.isolation == "node" and .guest.node != .femud.mbe_node' "$j")" = true ]
check "1s2n: says socket isolation is not possible" grep -q "not possible" <<<"$(jq -r .isolation_note "$j")"
# 1 package x 2 cores: the socket is split, and it says so
plan 1s2c "pack:1 numa:1(memory=$S8) core:2 pu:1" --vcpus 1 --mem 1G --pollers 1
j=$T/1s2c.json
check "1s2c: isolation 'split'" [ "$(jq -r .isolation "$j")" = split ]
check "1s2c: says strict isolation is not possible" grep -q "strict isolation is not possible" <<<"$(jq -r .isolation_note "$j")"
check "1s2c: one lcore (main polls)" [ "$(jq '.femud.cpus | length' "$j")" -eq 1 ]
out=$("$PLACE" --topology "pack:1 numa:1(memory=$S8) core:2 pu:1" --vcpus 1 --mem 1G --pollers 1)
check "1s2c: text plan says isolation is not possible" grep -q "not possible" <<<"$out"
# existing hugepages are used: 1 GiB pages reserved on node 1 of an XML topology
lstopo-no-graphics -i "pack:2 numa:1(memory=$S64) core:8 pu:2" --of xml - |
	awk '/<page_type size="4096"/ && ++n == 2 { print "<page_type size=\"1073741824\" count=\"8\"/>" } 1' >"$T/h.xml"
plan xml_1g "$T/h.xml" --vcpus 2 --mem 4G --pollers 2 --devsz 2G
j=$T/xml_1g.json
check "xml_1g: femud on node 1 with its 1 GiB pages" [ "$(jq '.femud.mbe_node == 1 and .femud.page_size == 1073741824' "$j")" = true ]
check "xml_1g: node 1 needs nothing more" [ "$(jq '[.hugepages[] | select(.node == 1) | .ok] == [true]' "$j")" = true ]

# machines too small
too_small small_cpus "not enough CPUs" "pack:1 numa:1 core:2 pu:1" --vcpus 4 --pollers 2
too_small small_smt "not enough CPUs" "pack:1 numa:1 core:2 pu:2" --vcpus 2 --pollers 1
too_small small_mem "not enough memory" "pack:2 numa:1(memory=1073741824) core:8 pu:1" --vcpus 2 --mem 4G --pollers 1
too_small small_node "node 0 has" "pack:1 numa:2(memory=2147483648) core:4 pu:1" --vcpus 2 --mem 3G --pollers 1 --devsz 64M
out=$("$PLACE" --topology "pack:two" 2>&1); rc=$?
check "bad topology: exit 2 ($out)" [ $rc -eq 2 ]
out=$("$PLACE" --vcpus lots 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--vcpus" <<<"$out"; then ok "bad option: exit 2: $out"
else ko "bad option: rc=$rc: $out"; fi

# this host: the plan it prints is accepted by femud as it is
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
	j=$T/host.json
	if "$PLACE" --json --vcpus 1 --pollers 1 --mem 256M --devsz 64M >"$j" 2>"$T/host.err"; then
		ok "host: plan printed"
		femud_accepts host "$j" 1
		check "host: source is host" [ "$(jq -r .topology.source "$j")" = host ]
	else
		ko "host: femu-place failed: $(cat "$T/host.err")"
	fi
	out=$("$PLACE" --apply --vcpus 1 --pollers 1 --mem 256M --devsz 64M)
	check "host: --apply starts femud pinned" grep -Eq '^taskset -c [0-9,-]+ femud --lcores ' <<<"$out"
fi

echo "place_plan: $pass passed, $fail failed"
[ $fail -eq 0 ]
