#!/bin/bash
# The test of an installed tree (make installcheck runs it, and make distcheck through that;
# tests/tooling/install.sh on a tree it installed and moved): from a directory outside the
# tree, its own gdrb runs a short sweep of the default profile with its own binaries and
# profiles, writes the results there and nothing into the tree, accepts and reports them; the
# doctor passes a fixture node and the installed health check runs the installed doctor; every
# command has its manual page.
#
#   tests/tooling/installed.sh ROOT      ROOT: the installed prefix (with DESTDIR in front),
#                                        /usr for the Debian package (.ci/debian-package)
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
[ $# -eq 1 ] && [ -x "$1/bin/gdrb" ] || fail "usage: installed.sh ROOT, ROOT holding bin/gdrb (got '${1:-}')"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
root=$1
gdrb=$root/bin/gdrb
# The simulated GPU answers as a node without a driver: host memory here, device memory
# where make check put the simulated GPU in front of CUDA and it is told to have one.
export SIMGPU_DRIVER=none

"$gdrb" --version | grep -qx "gdrb (gdrbench) [0-9][0-9.a-z~-]*" || fail "gdrb --version: $("$gdrb" --version 2>&1)"
touch "$WORK/stamp"
sleep 1

# The sweep: the default profile, small sizes, from a directory of its own.
mkdir "$WORK/here"
if [ "$HAVE_MPI" = 1 ]; then
	(cd "$WORK/here" && "$gdrb" sweep --sizes 8,64K --time-per-size 0.02 --bench latency,bw) \
		>"$WORK/sweep.out" 2>"$WORK/sweep.err" || { cat "$WORK/sweep.err"; fail "installed gdrb sweep exited $?"; }
	run=$(find "$WORK/here/results" -mindepth 1 -maxdepth 1 -type d -name '*-quick')
	[ -n "$run" ] && [ -s "$run/results.csv" ] || { cat "$WORK/sweep.err"; fail "no results under the current directory"; }
	csv_check "$run/results.csv" || fail "the installed sweep's results.csv does not follow the schema"
	grep -q "\"command\": \"[^\"]*$(basename "$root")/bin/gdrb_mpi_latency" "$run/meta.json" ||
		{ cat "$run/meta.json"; fail "the sweep did not run the installed binaries"; }
	[ -s "$run/summary.md" ] && [ -s "$run/report.html" ] || fail "no summary.md or report.html"
	pass "installed gdrb sweep: the installed binaries and quick profile, results under the current directory"

	# accept with a shipped profile's rules, and report again.
	printf 'include quick\nrule lat mpi_latency lat_p50_us <= 1000000 us mem=host\n' >"$WORK/here/lat.profile"
	(cd "$WORK/here" && "$gdrb" accept "$run" lat.profile) >"$WORK/accept.out" 2>&1 ||
		{ cat "$WORK/accept.out"; fail "installed gdrb accept exited $?"; }
	grep -q '^PASS: 1 rules' "$WORK/accept.out" || { cat "$WORK/accept.out"; fail "installed gdrb accept: no PASS"; }
	"$gdrb" report "$run" >"$WORK/report.out" 2>&1 || { cat "$WORK/report.out"; fail "installed gdrb report exited $?"; }
	pass "installed gdrb accept (a profile including the shipped quick) and report"
else
	echo "MPI not built: the installed sweep is not run"
fi

# The doctor on a fixture node, directly and through the installed Slurm health check (its
# doctor found relative to itself, not on PATH).
bash "$top_srcdir/tests/support/data/mk-sysfs-fixtures.sh" "$WORK/fx" >/dev/null || fail "could not make the fixture trees"
"$root/bin/gdrb_doctor" --sysfs-root "$WORK/fx/healthy/sys" --procfs-root "$WORK/fx/healthy/proc" --oneline \
	>"$WORK/doctor.out" 2>&1 || { cat "$WORK/doctor.out"; fail "installed gdrb_doctor on the healthy fixture"; }
grep -q '^gdrbench: OK' "$WORK/doctor.out" || { cat "$WORK/doctor.out"; fail "installed doctor: no OK line"; }
cat >"$WORK/scontrol" <<'EOF'
#!/bin/sh
[ "$1" = show ] && printf 'NodeName=%s Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n' "$3"
exit 0
EOF
chmod +x "$WORK/scontrol"
hc=$(find "$root" -name gdrbench-healthcheck -type f)
[ -x "$hc" ] || fail "no installed gdrbench-healthcheck"
PATH=/usr/bin:/bin SCONTROL=$WORK/scontrol SLURMD_NODENAME=node1 \
	GDRB_DOCTOR_ARGS="--sysfs-root $WORK/fx/healthy/sys --procfs-root $WORK/fx/healthy/proc" \
	"$hc" >"$WORK/hc.out" 2>&1 || { cat "$WORK/hc.out"; fail "installed health check on the healthy fixture exited $?"; }
pass "installed gdrb_doctor and gdrbench-healthcheck (its own doctor, PATH without it) pass the healthy fixture"

# A manual page for gdrb, each subcommand and each installed binary (compressed where a
# distribution's package installed them).
man_page() { [ -s "$root/share/man/man1/$1.1" ] || [ -s "$root/share/man/man1/$1.1.gz" ]; }
for b in "$root"/bin/gdrb*; do
	n=$(basename "$b")
	man_page "$n" || fail "no manual page for $n"
done
for s in sweep plot accept report; do
	man_page "gdrb-$s" || fail "no manual page for gdrb $s"
done
pass "a manual page for every installed command"

# Nothing written into the installed tree.
new=$(find "$root" -newer "$WORK/stamp")
[ -z "$new" ] || fail "written into the installed tree: $new"
pass "nothing written into the installed tree"
