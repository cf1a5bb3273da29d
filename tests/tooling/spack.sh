#!/bin/bash
# The Spack package (contrib/spack, docs/install.md): a real Spack installs gdrbench ~cuda ~nccl
# +mpi +verbs from a local mirror holding the release tarball, with the distribution's Open MPI,
# rdma-core, hwloc, Python, GNU make and pkgconf as external packages; loaded (spack load), its
# gdrb runs the default sweep (small sizes) and the doctor from a directory of its own, and the installed tree
# passes its own test (installed.sh). Spack is no registry package: where it is not installed
# this test skips, saying so. .ci/run runs it.
#
#   tests/tooling/spack.sh TARBALL       TARBALL: gdrbench-VERSION.tar.gz from make dist
#
# spack is taken from PATH (or $SPACK_ROOT/bin); SPACK_PYTHON names a Python that has clingo
# where Spack cannot bootstrap it (no network). Nothing of the user's Spack configuration is
# read or changed: the test's own configuration, install tree and caches are under its $WORK.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
[ $# -eq 1 ] && [ -r "$1" ] || fail "usage: spack.sh TARBALL, TARBALL a gdrbench-VERSION.tar.gz (got '${1:-}')"
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
version=$(basename "$tarball" .tar.gz)
version=${version#gdrbench-}
[ -n "${SPACK_ROOT:-}" ] && PATH=$SPACK_ROOT/bin:$PATH
command -v spack >/dev/null 2>&1 || skip "Spack not installed (no spack on PATH, no SPACK_ROOT): Spack is no registry package; docs/install.md says where this test ran"
for tool in mpirun pkg-config make /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 || skip "no $tool for the external packages"
done
pkg-config --exists libibverbs hwloc || skip "no libibverbs or hwloc development files for the external packages"

# Spack's own state under $WORK: neither ~/.spack nor the site's configuration is read.
export SPACK_USER_CONFIG_PATH=$WORK/spack-user SPACK_USER_CACHE_PATH=$WORK/spack-cache SPACK_DISABLE_LOCAL_CONFIG=1
cfg=$WORK/spack-config
mkdir -p "$cfg" "$WORK/mirror/gdrbench" "$WORK/user"
cp "$tarball" "$WORK/mirror/gdrbench/"
# The package repository, its checksum the tarball's at hand (the committed one is the release's).
cp -r "$top_srcdir/contrib/spack" "$WORK/contrib-spack"
mkdir -p "$WORK/contrib/easybuild"
[ -f "$top_srcdir/contrib/easybuild/gdrbench-$version.eb" ] && cp "$top_srcdir/contrib/easybuild/gdrbench-$version.eb" "$WORK/contrib/easybuild/"
mv "$WORK/contrib-spack" "$WORK/contrib/spack"
bash "$top_srcdir/scripts/lib/set-release-checksum" "$tarball" "$WORK/contrib" >"$WORK/sum.out" 2>&1 ||
	{ cat "$WORK/sum.out"; fail "set-release-checksum on a copy of the package"; }

# The distribution's packages as externals, at the versions installed here.
ompi_version=$(mpirun --version 2>/dev/null | sed -n 's/^mpirun (Open MPI) \([0-9.]*\).*/\1/p' | head -n 1)
[ -n "$ompi_version" ] || skip "mpirun is not Open MPI's: $(mpirun --version 2>&1 | head -n 1)"
mpi_prefix=$(dirname "$(dirname "$(command -v mpirun)")")
# rdma-core's version is libibverbs' last two numbers (1.14.44.0: rdma-core 44.0).
rdma_version=$(pkg-config --modversion libibverbs | awk -F. '{ print $(NF - 1) "." $NF }')
hwloc_version=$(pkg-config --modversion hwloc)
python_version=$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')
pkgconf_version=$(pkg-config --version)
gmake_version=$(make --version | sed -n '1s/^GNU Make \([0-9.]*\).*/\1/p')
[ -n "$gmake_version" ] || skip "make is not GNU make: $(make --version 2>&1 | head -n 1)"
cat >"$cfg/packages.yaml" <<YAML
packages:
  all:
    providers:
      mpi: [openmpi]
  openmpi:
    buildable: false
    externals:
    - spec: openmpi@$ompi_version
      prefix: $mpi_prefix
  rdma-core:
    buildable: false
    externals:
    - spec: rdma-core@$rdma_version
      prefix: /usr
  hwloc:
    buildable: false
    externals:
    - spec: hwloc@$hwloc_version
      prefix: /usr
  python:
    buildable: false
    externals:
    - spec: python@$python_version
      prefix: /usr
  pkgconf:
    buildable: false
    externals:
    - spec: pkgconf@$pkgconf_version
      prefix: /usr
  gmake:
    buildable: false
    externals:
    - spec: gmake@$gmake_version
      prefix: /usr
YAML
cat >"$cfg/config.yaml" <<YAML
config:
  install_tree:
    root: $WORK/spack-opt
  build_stage: [$WORK/spack-stage]
  source_cache: $WORK/spack-source-cache
  misc_cache: $WORK/spack-misc-cache
  build_jobs: 2
YAML
cat >"$cfg/repos.yaml" <<YAML
repos:
- $WORK/contrib/spack
YAML
cat >"$cfg/mirrors.yaml" <<YAML
mirrors:
  gdrbench-release: file://$WORK/mirror
YAML
cat >"$cfg/bootstrap.yaml" <<YAML
bootstrap:
  root: $WORK/spack-bootstrap
YAML
sp() { spack -C "$cfg" "$@"; }

sp compiler find >"$WORK/compilers.out" 2>&1 || { cat "$WORK/compilers.out"; fail "spack compiler find"; }
(cd "$WORK/user" && sp install --no-cache gdrbench ~cuda ~nccl +mpi +verbs) >"$WORK/install.out" 2>&1 || {
	tail -n 60 "$WORK/install.out"
	grep -q 'clingo' "$WORK/install.out" && skip "Spack cannot bootstrap its concretizer (clingo) here: set SPACK_PYTHON to a Python with clingo"
	find "$WORK/spack-stage" -name 'spack-build-out.txt' -exec tail -n 40 {} + 2>/dev/null
	fail "spack install gdrbench exited non-zero (above)"
}
root=$(sp location -i gdrbench) || fail "spack location -i gdrbench"
cfargs=$root/.spack/spack-configure-args.txt
[ -r "$cfargs" ] || fail "spack install left no $cfargs"
for opt in --with-mpi=/ --with-verbs=/usr --with-hwloc=/usr --without-cuda --without-nccl; do
	grep -q -- "$opt" "$cfargs" || fail "configure was not given $opt: $(cat "$cfargs")"
done
pass "spack install gdrbench ~cuda ~nccl +mpi +verbs from the local mirror, MPI, rdma-core, hwloc and Python external"

# load_runs [strip]: in a subshell, load the package as a user does and, from a directory of
# its own, run its gdrb: the default sweep (small sizes), the doctor. strip: the package's bin
# taken off PATH again after the load (the fault the check must catch).
load_runs() {
	(
		eval "$(sp load --sh gdrbench)" || exit 3
		[ "${1:-}" = strip ] && PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vx "$root/bin" | paste -sd :)
		gdrb=$(command -v gdrb) || { echo "spack load gdrbench put no gdrb on PATH"; exit 4; }
		[ "$gdrb" = "$root/bin/gdrb" ] || { echo "gdrb on PATH is $gdrb, not the package's"; exit 4; }
		dir=$(mktemp -d "$WORK/user/run.XXXXXX") && cd "$dir" || exit 3
		gdrb sweep --sizes 8,64K --time-per-size 0.02 >sweep.out 2>&1 ||
			{ cat sweep.out; echo "the package's gdrb sweep exited $?"; exit 5; }
		test -s results/*-quick/results.csv || { echo "no results/*-quick/results.csv under the current directory"; exit 5; }
		gdrb_doctor --oneline >doctor.out 2>&1
		case $? in 0 | 1 | 77) ;; *) cat doctor.out; echo "the package's gdrb_doctor failed"; exit 6 ;; esac
		grep -q "^gdrbench: " doctor.out || { cat doctor.out; echo "the package's gdrb_doctor printed no verdict"; exit 6; }
	)
}
out=$(load_runs 2>&1) || fail "spack load gdrbench: $out"
pass "spack load gdrbench: gdrb on PATH, the default sweep and gdrb_doctor from a directory of its own"
out=$(load_runs strip 2>&1) && fail "a load without gdrb on PATH passed the check"
case $out in *"put no gdrb on PATH"*) ;; *) fail "a load without gdrb on PATH failed otherwise: $out" ;; esac
pass "a load without gdrb on PATH is caught"

HAVE_MPI=1 bash "$top_srcdir/tests/tooling/installed.sh" "$root" || fail "the package's installed tree fails its own test (above)"
