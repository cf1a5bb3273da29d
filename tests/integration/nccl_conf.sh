#!/bin/bash
# NCCL's configuration files on the simulated NCCL, as NCCL reads them (src/misc/param.cc):
# NCCL_CONF_FILE or else ~/.nccl.conf, then /etc/nccl.conf (here a file the test hook
# GDRB_INJECT_NCCL_ETC_CONF names: the machine's own is never read), the environment winning
# over a file and the first file over the second. The header names each setting and its file;
# NCCL_ALGO from a file fills the algorithm column as the environment's does; a file's
# NCCL_NET_GDR_LEVEL reaches the note (the verdict reads it) unless --nccl-gdr sets it in the
# environment, which wins, said; a comment, a line without '=' and a name with a blank are
# passed over as NCCL passes them; a link, a FIFO or a folder is named, never followed or
# waited on.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl
unset NCCL_CONF_FILE NCCL_ALGO NCCL_PROTO
export GDRB_TEST_HOOKS=1 GDRB_INJECT_NCCL_ETC_CONF=$WORK/etc/nccl.conf
mkdir -p "$WORK/home" "$WORK/etc"
export HOME=$WORK/home

csv=$WORK/nccl.csv
run() { # ARGS...: gdrb_nccl_allreduce at 2 ranks into $csv (a fresh one); fails the test unless it exits 0
	: >"$csv"
	timeout 120 "$MPIRUN" -np 2 "$bin/gdrb_nccl_allreduce" -m 8 -t 0.01 -n 5 --csv "$csv" "$@" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_nccl_allreduce $*"; }
}
# header TEXT WHAT: the header has a line holding TEXT (fixed), else fail saying WHAT
header() { grep -q -F -- "$1" "$WORK/out" || { cat "$WORK/out"; fail "$2"; }; }

cat >"$HOME/.nccl.conf" <<'EOF'
# a comment, passed over
NCCL_ALGO=Tree
a line without an equals sign
NCCL_PROTO = LL
NCCL_NET_GDR_LEVEL=PHB
CUDA_MODULE_LOADING=LAZY
EOF
printf 'NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME=eth0\n' >"$WORK/etc/nccl.conf"

run
csv_has "$csv" algorithm=Tree protocol= || { cat "$csv"; fail "NCCL_ALGO=Tree of ~/.nccl.conf not in the algorithm column"; }
grep -q "algorithm as set in $HOME/.nccl.conf, not read from NCCL's log" "$csv" ||
	{ cat "$csv"; fail "the note does not say the algorithm came from ~/.nccl.conf"; }
grep -q "from $HOME/.nccl.conf: NCCL_ALGO=Tree NCCL_NET_GDR_LEVEL=PHB; from $WORK/etc/nccl.conf: NCCL_SOCKET_IFNAME=eth0\"" "$csv" ||
	{ cat "$csv"; fail "the note does not list the files' settings in force (NCCL_NET_GDR_LEVEL=PHB for the verdict)"; }
header "#   ~/.nccl.conf '$HOME/.nccl.conf': NCCL_ALGO=Tree, NCCL_NET_GDR_LEVEL=PHB; 1 other variable(s) set; 2 line(s) passed over as NCCL passes them (a comment, no '='); 1 line(s) with a blank in the name" \
	"the header does not show ~/.nccl.conf's settings, its other variable, its passed-over lines and its blank name"
header "#   /etc/nccl.conf '$WORK/etc/nccl.conf': NCCL_ALGO=Ring (set by an earlier line or file, whose value NCCL keeps), NCCL_SOCKET_IFNAME=eth0" \
	"the header does not say /etc/nccl.conf's NCCL_ALGO loses to ~/.nccl.conf's"
header "--nccl-gdr auto: NCCL_NET_GDR_LEVEL=PHB as $HOME/.nccl.conf sets it" "--nccl-gdr auto: the file's level not said"
pass "the home file then /etc/nccl.conf: settings named by file, the first file's NCCL_ALGO in the column, garbled lines passed over"

# The environment wins over a file; --nccl-gdr sets NCCL_NET_GDR_LEVEL in the environment.
NCCL_ALGO=Ring run --nccl-gdr on
csv_has "$csv" algorithm=Ring || { cat "$csv"; fail "the environment's NCCL_ALGO did not win over the file's"; }
grep -q 'algorithm as set in the environment' "$csv" || { cat "$csv"; fail "the note does not say the environment's algorithm"; }
header "NCCL_ALGO=Tree (overridden: the environment's Ring wins)" "the header does not say the environment overrides the file's NCCL_ALGO"
header "--nccl-gdr on: NCCL_NET_GDR_LEVEL=SYS in the environment, which wins over $HOME/.nccl.conf's PHB" \
	"--nccl-gdr on: the header does not say the environment wins over the file's level"
grep -q 'NCCL_NET_GDR_LEVEL=PHB' "$csv" && { cat "$csv"; fail "--nccl-gdr on: the overridden file level is in the note"; }
grep -q 'NCCL_NET_GDR_LEVEL=SYS' "$csv" || { cat "$csv"; fail "--nccl-gdr on: SYS not in the note"; }
pass "the environment's NCCL_ALGO and --nccl-gdr on's NCCL_NET_GDR_LEVEL win over the file's, said in the header"

# NCCL_CONF_FILE takes ~/.nccl.conf's place.
printf 'NCCL_PROTO=LL128\n' >"$WORK/mine.conf"
NCCL_CONF_FILE=$WORK/mine.conf run
# ~/.nccl.conf's Tree is not read: /etc/nccl.conf's Ring is now in force.
csv_has "$csv" algorithm=Ring protocol=LL128 || { cat "$csv"; fail "NCCL_CONF_FILE's NCCL_PROTO not in the column, or ~/.nccl.conf still read"; }
grep -q "algorithm as set in $WORK/etc/nccl.conf, protocol in $WORK/mine.conf" "$csv" ||
	{ cat "$csv"; fail "the note does not say which file gave the algorithm and which the protocol"; }
header "#   NCCL_CONF_FILE '$WORK/mine.conf': NCCL_PROTO=LL128" "the header does not name NCCL_CONF_FILE's file"
grep -q -F "$HOME/.nccl.conf" "$WORK/out" && { cat "$WORK/out"; fail "the home file read though NCCL_CONF_FILE is set"; }
pass "NCCL_CONF_FILE read in place of ~/.nccl.conf"

# A link, a FIFO, a folder: named, never followed or waited on.
ln -s "$HOME/.nccl.conf" "$WORK/link.conf"
mkfifo "$WORK/fifo.conf"
mkdir "$WORK/dir.conf"
for kind in link fifo dir; do
	NCCL_CONF_FILE=$WORK/$kind.conf run
	case $kind in
	link) want="a symbolic link: not followed" ;;
	fifo) want="a FIFO: not read (NCCL would wait on it)" ;;
	dir) want="a directory" ;;
	esac
	header "#   NCCL_CONF_FILE '$WORK/$kind.conf': $want" "NCCL_CONF_FILE naming a $kind: not named as one"
	# Not ~/.nccl.conf's Tree (not read: NCCL_CONF_FILE is set), nor anything behind the link.
	csv_has "$csv" algorithm=Ring protocol= || { cat "$csv"; fail "NCCL_CONF_FILE naming a $kind: its settings were taken"; }
done
pass "NCCL_CONF_FILE naming a link, a FIFO, a folder: named in the header, not followed, not waited on"
