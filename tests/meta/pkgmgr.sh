#!/bin/bash
# The HPC package recipes agree with configure.ac (pkgmgr_check.py): the Spack package's
# variants are configure's --with-X options, each conditioning its dependency, and the
# EasyBuild easyconfig of this version gives configure only options it declares. Each kind of
# disagreement is planted in a copy and must be caught. The recipes built for real:
# tests/tooling/easybuild.sh and spack.sh (docs/install.md).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
check=$top_srcdir/tests/meta/pkgmgr_check.py
ac=$top_srcdir/configure.ac
pkg=$top_srcdir/contrib/spack/packages/gdrbench/package.py
ecdir=$top_srcdir/contrib/easybuild

python3 "$check" "$ac" "$pkg" "$ecdir" || fail "the recipes disagree with configure.ac (above)"
pass "the Spack package's variants and the easyconfig's configopts agree with configure.ac"

# planted NAME PATTERN AC PKG ECDIR: the check must fail on the copies, saying PATTERN.
planted() {
	local out
	out=$(python3 "$check" "$3" "$4" "$5" 2>&1) && fail "$1: not caught"
	printf '%s\n' "$out" | grep -q -- "$2" || fail "$1: caught, but not as '$2': $out"
}
mkdir -p "$WORK/ec"
cp "$ecdir"/*.eb "$WORK/ec/"

# A variant configure does not know.
sed 's/for name in ("mpi", /for name in ("ucx", "mpi", /; s/^    variant("mpi",/    variant("ucx", default=False, description="x")\n&/' "$pkg" >"$WORK/ucx.py"
planted "a variant configure does not know" "variant 'ucx' maps to --with-ucx, which configure.ac does not declare" \
	"$ac" "$WORK/ucx.py" "$WORK/ec"
# An option configure gained and the package did not.
sed 's/^AC_ARG_WITH(\[hwloc\],/AC_ARG_WITH([ofi], [x], [], [with_ofi=check])\n&/' "$ac" >"$WORK/ofi.ac"
planted "a configure option without a variant" "configure.ac's --with-ofi has no variant" "$WORK/ofi.ac" "$pkg" "$WORK/ec"
# A variant whose dependency is not conditioned on it.
sed 's/^    depends_on("rdma-core", when="+verbs")$/    depends_on("rdma-core")/' "$pkg" >"$WORK/dep.py"
planted "a dependency not conditioned on its variant" "variant 'verbs' conditions no depends_on" "$ac" "$WORK/dep.py" "$WORK/ec"
# A variant that maps to nothing.
sed 's/^    variant("mpi",/    variant("debug", default=False, description="x")\n&/' "$pkg" >"$WORK/debug.py"
planted "a variant mapping to nothing" "variant 'debug' is neither a configure option" "$ac" "$WORK/debug.py" "$WORK/ec"
# Not Python.
sed 's/^class Gdrbench(AutotoolsPackage):$/class Gdrbench(AutotoolsPackage)/' "$pkg" >"$WORK/syntax.py"
planted "package.py not Python" "not Python" "$ac" "$WORK/syntax.py" "$WORK/ec"
# configure's version moved on without the recipes.
sed 's/^AC_INIT(\[gdrbench\], \[[^]]*\]/AC_INIT([gdrbench], [9.9.9]/' "$ac" >"$WORK/version.ac"
planted "a version without recipes" "no version(\"9.9.9\"" "$WORK/version.ac" "$pkg" "$WORK/ec"
planted "a version without an easyconfig" "no easyconfig for configure.ac's version 9.9.9" "$WORK/version.ac" "$pkg" "$WORK/ec"
# The easyconfig giving configure an option it does not declare, or not running the sweep.
sed -i "s/^configopts = '/configopts = '--with-ucx /" "$WORK"/ec/*.eb
planted "an easyconfig option configure does not know" "configopts gives --with-ucx, which configure.ac does not declare" \
	"$ac" "$pkg" "$WORK/ec"
cp "$ecdir"/*.eb "$WORK/ec/"
sed -i "s/gdrb sweep/gdrb plot/" "$WORK"/ec/*.eb
planted "an easyconfig whose sanity check runs no sweep" "sanity_check_commands do not run gdrb sweep" "$ac" "$pkg" "$WORK/ec"
pass "each planted disagreement is caught: a variant or option one side lacks, an unconditioned dependency, a stray variant, bad syntax, a version without recipes, an unknown configopt, no sweep"
