#!/bin/bash
# The EasyBuild easyconfig (contrib/easybuild, docs/install.md): EasyBuild builds the release
# tarball with it (its sanity check runs the installed gdrb --version and a short sweep), and
# the module it writes, loaded with Lmod, puts gdrb on PATH: from a directory of its own, the
# default sweep (small sizes) and the doctor run, and the installed tree passes its own test
# (installed.sh). The module check is shown to catch a module without gdrb on PATH. Skips where
# EasyBuild (eb, from PyPI) or Lmod (Debian's lmod) is not installed. .ci/run runs it.
#
#   tests/tooling/easybuild.sh TARBALL       TARBALL: gdrbench-VERSION.tar.gz from make dist
#
# eb is taken from PATH; Lmod's shell setup from LMOD_PKG, else Debian's place.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
[ $# -eq 1 ] && [ -r "$1" ] || fail "usage: easybuild.sh TARBALL, TARBALL a gdrbench-VERSION.tar.gz (got '${1:-}')"
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
version=$(basename "$tarball" .tar.gz)
version=${version#gdrbench-}
command -v eb >/dev/null 2>&1 || skip "EasyBuild not installed (eb not on PATH: pip install easybuild)"
eb --version >/dev/null 2>&1 || skip "eb does not start: $(eb --version 2>&1 | head -n 1)"
lmod_init=${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash
[ -r "$lmod_init" ] || skip "Lmod not installed (no $lmod_init: apt-get install lmod)"
ec=$top_srcdir/contrib/easybuild/gdrbench-$version.eb
[ -f "$ec" ] || fail "no easyconfig for the tarball's version $version: $ec"

# A copy of the easyconfig (and the Spack package, which set-release-checksum updates too)
# checking the tarball at hand: the committed checksum is the release's.
mkdir -p "$WORK/src/g/gdrbench" "$WORK/eb" "$WORK/user" "$WORK/contrib/easybuild" "$WORK/contrib/spack/packages/gdrbench"
cp "$tarball" "$WORK/src/g/gdrbench/"
cp "$ec" "$WORK/contrib/easybuild/"
cp "$top_srcdir/contrib/spack/packages/gdrbench/package.py" "$WORK/contrib/spack/packages/gdrbench/"
bash "$top_srcdir/scripts/lib/set-release-checksum" "$tarball" "$WORK/contrib" >"$WORK/sum.out" 2>&1 ||
	{ cat "$WORK/sum.out"; fail "set-release-checksum on a copy of the easyconfig"; }
ec=$WORK/contrib/easybuild/gdrbench-$version.eb

# EasyBuild refuses root unless told; CI runs as root.
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-use-as-root-and-accept-consequences)
# shellcheck source=/dev/null
. "$lmod_init"
(cd "$WORK/user" && eb "$ec" --robot --installpath="$WORK/eb" --sourcepath="$WORK/src" \
	--buildpath="$WORK/build" --tmpdir="$WORK/tmp" "${as_root[@]}") >"$WORK/eb.out" 2>&1 ||
	{ tail -n 40 "$WORK/eb.out"; find "$WORK/build" "$WORK/tmp" -name 'easybuild-*.log' -exec tail -n 60 {} + 2>/dev/null
	  fail "eb $(basename "$ec") exited non-zero (its output above)"; }
grep -q "result for command '.*gdrb sweep .*': OK" "$WORK/eb.out" ||
	{ cat "$WORK/eb.out"; fail "eb's sanity check did not run gdrb sweep"; }
pass "eb $(basename "$ec"): built from the tarball, its sanity check (gdrb --version, a short sweep) passed"

# module_runs MODULEPATH: in a shell of its own, load gdrbench from MODULEPATH and run the
# module's gdrb from a directory of its own: the default sweep on small sizes, the doctor.
module_runs() {
	local dir
	dir=$(mktemp -d "$WORK/user/run.XXXXXX")
	# shellcheck disable=SC2016 # expanded by the inner shell
	env -i HOME="$HOME" PATH=/usr/bin:/bin TMPDIR="${TMPDIR:-/tmp}" LMOD_INIT="$lmod_init" MP="$1" \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
		OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 DIR="$dir" bash -c '
		. "$LMOD_INIT" && module use "$MP" && module load gdrbench || exit 3
		gdrb=$(command -v gdrb) || { echo "module load gdrbench put no gdrb on PATH"; exit 4; }
		case $gdrb in "$EBROOTGDRBENCH"/bin/gdrb) ;; *) echo "gdrb on PATH is $gdrb, not the module'\''s"; exit 4 ;; esac
		cd "$DIR" && gdrb sweep --sizes 8,64K --time-per-size 0.02 >sweep.out 2>&1 ||
			{ cat sweep.out; echo "the module'\''s gdrb sweep exited $?"; exit 5; }
		ls -d results/*-quick >/dev/null && test -s results/*-quick/results.csv ||
			{ echo "no results/*-quick/results.csv under the current directory"; exit 5; }
		gdrb_doctor --oneline >doctor.out 2>&1; rc=$?
		# On a node without GPU or RDMA NIC the doctor reports it (1) or says it cannot tell (77).
		case $rc in 0 | 1 | 77) ;; *) cat doctor.out; echo "the module'\''s gdrb_doctor exited $rc"; exit 6 ;; esac
		grep -q "^gdrbench: " doctor.out || { cat doctor.out; echo "the module'\''s gdrb_doctor printed no verdict"; exit 6; }
		echo "$EBROOTGDRBENCH"'
}

out=$(module_runs "$WORK/eb/modules/all" 2>&1) || fail "the EasyBuild module: $out"
root=$(printf '%s\n' "$out" | tail -n 1)
[ -x "$root/bin/gdrb" ] || fail "the module names no installed tree: $out"
pass "module load gdrbench (Lmod): gdrb on PATH, the default sweep and gdrb_doctor from a directory of its own"

HAVE_MPI=1 bash "$top_srcdir/tests/tooling/installed.sh" "$root" || fail "the module's installed tree fails its own test (above)"

# The check above must catch a module that does not put gdrb on PATH.
mkdir -p "$WORK/broken/gdrbench"
grep -v '^prepend_path("PATH"' "$WORK/eb/modules/all/gdrbench/$version.lua" >"$WORK/broken/gdrbench/$version.lua"
out=$(module_runs "$WORK/broken" 2>&1) && fail "a module without gdrb on PATH passed the module check"
case $out in *"put no gdrb on PATH"*) ;; *) fail "a module without gdrb on PATH failed otherwise: $out" ;; esac
pass "a module without gdrb on PATH is caught"
