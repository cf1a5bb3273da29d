# shellcheck shell=bash
# A multi-node test bed on one machine (sourced after tests/support/lib.sh): N "nodes", each a
# network namespace with its own hostname (a UTS namespace made at each entry), on a
# bridge of their own, and an Open MPI launcher agent (tests/cluster/netns/agent) that runs
# the daemons inside them, so `mpirun --host gdrbn1,gdrbn2` crosses "nodes" over TCP.
# The bridge lives in a namespace too: nothing is added to the machine's own network,
# and parallel test runs (make -j) each have their own namespaces, named by their pid.
#
#   bed_up N        make gdrbn1..gdrbnN (exit 77 where this machine cannot), set the
#                   OMPI_MCA_* variables that send mpirun through the agent, tcp only
#   on_node H CMD   run CMD on node H (its network, its hostname); mpirun runs from one
#   bed_down        remove everything bed_up made (bed_up sets the EXIT trap for it)

: "${top_srcdir:?source lib.sh first}"
BED_NET=10.77.0
BED_PREFIX=gdrb-$$-
BED_NODES=()

# The namespace of node H (the agent computes the same from GDRB_NETNS_PREFIX).
bed_ns() { echo "$BED_PREFIX$1"; }

# bed_down [PREFIX]: remove the namespaces of this run (or of PREFIX, a run that died).
bed_down() {
	local ns pid
	for ns in $(ip netns list 2>/dev/null | awk -v p="${1:-$BED_PREFIX}" 'index($1, p) == 1 { print $1 }'); do
		# The daemons and ranks this test started in the node (a failed run may leave them).
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
}

# bed_skip WHY: undo what is made, then skip the test.
bed_skip() {
	bed_down
	skip "no multi-node test bed here: $*"
}

bed_up() {
	local n=$1 i sw err=$WORK/bed.err
	[ "$(id -u)" = 0 ] || skip "no multi-node test bed here: network namespaces need root"
	command -v ip >/dev/null 2>&1 || skip "no multi-node test bed here: no 'ip' command (iproute2)"
	command -v unshare >/dev/null 2>&1 || skip "no multi-node test bed here: no 'unshare' (util-linux)"
	"$MPIRUN" --version 2>/dev/null | grep -q 'Open MPI' ||
		skip "no multi-node test bed here: the launcher agent is Open MPI's (plm_rsh_agent); $MPIRUN is not Open MPI"
	trap 'bed_down; rm -rf "$WORK"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	# Beds of test runs killed before their trap ran (kill -9): their pid is gone.
	for pid in $(ip netns list 2>/dev/null | sed -n 's/^gdrb-\([0-9]*\)-.*/\1/p' | sort -u); do
		kill -0 "$pid" 2>/dev/null || bed_down "gdrb-$pid-"
	done
	sw=$(bed_ns switch)
	ip netns add "$sw" 2>"$err" || bed_skip "ip netns add: $(head -1 "$err")"
	ip -n "$sw" link add br0 type bridge 2>"$err" || bed_skip "no bridge: $(head -1 "$err")"
	ip -n "$sw" link set br0 up || bed_skip "cannot bring the bridge up"
	unshare --uts true 2>"$err" || bed_skip "unshare --uts: $(head -1 "$err")"
	for i in $(seq 1 "$n"); do
		local host=gdrbn$i ns
		ns=$(bed_ns "$host")
		ip netns add "$ns" 2>"$err" || bed_skip "ip netns add: $(head -1 "$err")"
		ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns" 2>"$err" ||
			bed_skip "no veth pair: $(head -1 "$err")"
		ip -n "$sw" link set "p$i" master br0 up &&
			ip -n "$ns" addr add "$BED_NET.$i/24" dev eth0 &&
			ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
			bed_skip "cannot set up $host's interface"
		BED_NODES+=("$host")
	done
	export GDRB_NETNS_PREFIX=$BED_PREFIX
	# mpirun starts a daemon on each other host through the agent, one by one (no tree
	# spawn: every daemon is started from the node mpirun runs on); daemons and ranks
	# talk over the bridge, TCP only (no shared memory between "nodes").
	export OMPI_MCA_plm_rsh_agent=$top_srcdir/tests/cluster/netns/agent
	export OMPI_MCA_plm_rsh_no_tree_spawn=1
	export OMPI_MCA_oob_tcp_if_include=$BED_NET.0/24
	export OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1
	export OMPI_MCA_btl_tcp_if_include=$BED_NET.0/24
	# The nodes share this machine's cores, and each daemon binds its node's first rank to
	# its first core: every rank of every bed on core 0 (a busy machine then starved one
	# until its peer gave it up: no answer for 20 s). Unbound, they spread as processes do.
	export OMPI_MCA_hwloc_base_binding_policy=none
	# Every node's ranks share these cores, but each daemon sees a node of its own and no
	# oversubscription, so its ranks poll for messages without ever yielding: a rank waiting
	# on its peer then keeps that peer off the core (CI's fresh root at the lowest priority
	# beside the passes starved them). They yield while they wait, as Open MPI's ranks do
	# where it knows a node oversubscribed.
	export OMPI_MCA_mpi_yield_when_idle=1
}

on_node() {
	local host=$1
	shift
	ip netns exec "$(bed_ns "$host")" unshare --uts -- "$top_srcdir/tests/cluster/netns/agent" --here "$host" "$@"
}

# bed_hosts N: the first N nodes as mpirun's --host list (gdrbn1,gdrbn2,...).
bed_hosts() {
	local IFS=,
	echo "${BED_NODES[*]:0:$1}"
}
