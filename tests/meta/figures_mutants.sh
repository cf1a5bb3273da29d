#!/bin/bash
# figures_mutants.sh: each factor of the figure arithmetic (common/core/report/figures.c), of the
# collectives' table (common/core/coll/coll_table.c) and the driver's pair sum (common/core/driver.c)
# is changed, one at a time, in a copy of its source; tests/unit/test_figures.c built against the
# copy must fail, in the tests named for that factor. Built against the unchanged copies it
# must pass. The compiler, flags and libraries are make's (AM_TESTS_ENVIRONMENT in
# tests/meta/Makefile.inc), so the copies build as tests/unit/test_figures does.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

[ -x "$top_builddir/tests/unit/test_figures" ] || skip "tests/unit/test_figures is not built (no Check)"
[ -n "${GDRB_FIG_CC:-}" ] || skip "GDRB_FIG_CC is not set: run it through make check, which gives the compiler and flags"
read -r -a cc <<<"$GDRB_FIG_CC"
read -r -a cflags <<<"${GDRB_FIG_CFLAGS:-}"
read -r -a libs <<<"${GDRB_FIG_LIBS:-}"
command -v "${cc[0]}" >/dev/null 2>&1 || skip "no compiler: $GDRB_FIG_CC"
# make's include paths and libraries are relative to the build tree.
cd "$top_builddir" || fail "cd $top_builddir"

# The sources a mutant may change; each is compiled from a copy in $WORK/src.
units=(common/core/report/figures.c common/core/coll/coll_table.c common/core/driver.c)
mkdir -p "$WORK/src" "$WORK/obj"

# compile SRC OBJ
compile() {
	"${cc[@]}" "${cflags[@]}" -c "$1" -o "$2" 2>"$WORK/cc.err" ||
		{ cat "$WORK/cc.err" >&2; fail "compiling $1"; }
}

# build_and_run BIN OBJ...: link the test from the objects, run it; its output in $WORK/out.
build_and_run() {
	local bin=$1
	shift
	"${cc[@]}" "${cflags[@]}" -o "$bin" "$WORK/obj/test_figures.o" "$@" "${libs[@]}" 2>"$WORK/cc.err" ||
		{ cat "$WORK/cc.err" >&2; fail "linking $bin"; }
	if command -v timeout >/dev/null 2>&1; then
		timeout 120 "$bin" >"$WORK/out" 2>&1
	else
		"$bin" >"$WORK/out" 2>&1
	fi
}

compile "$top_srcdir/tests/unit/test_figures.c" "$WORK/obj/test_figures.o"
for unit in "${units[@]}"; do
	cp "$top_srcdir/$unit" "$WORK/src/"
	chmod u+w "$WORK/src/${unit##*/}"
	compile "$WORK/src/${unit##*/}" "$WORK/obj/$(basename "$unit" .c).o"
done
pristine=()
for unit in "${units[@]}"; do
	pristine+=("$WORK/obj/$(basename "$unit" .c).o")
done
build_and_run "$WORK/pristine" "${pristine[@]}" || { cat "$WORK/out"; fail "the unchanged sources fail the test"; }
pass "test_figures built from copies of the unchanged sources passes"

count=0
# mutant FILE SED TESTS WHAT: FILE (a basename of units) with one line changed by SED must
# fail each of TESTS (space-separated Check test names), a Check failure (:F:), not a crash.
mutant() {
	local file=$1 expr=$2 tests=$3 what=$4 changed t objs=() o
	sed -e "$expr" "$WORK/src/$file" >"$WORK/mutant.c"
	changed=$(diff "$WORK/src/$file" "$WORK/mutant.c" | grep -c '^<')
	[ "$changed" = 1 ] ||
		fail "$what: '$expr' changes $changed lines of $file, not 1: update tests/meta/figures_mutants.sh"
	compile "$WORK/mutant.c" "$WORK/mutant.o"
	for o in "${pristine[@]}"; do
		[ "${o##*/}" = "$(basename "$file" .c).o" ] && o=$WORK/mutant.o
		objs+=("$o")
	done
	if build_and_run "$WORK/mutant" "${objs[@]}"; then
		cat "$WORK/out"
		fail "$what ($file: $expr): test_figures passes"
	fi
	for t in $tests; do
		grep -q ":F:[^:]*:$t:" "$WORK/out" || { cat "$WORK/out"; fail "$what ($file: $expr): $t does not fail"; }
	done
	pass "$what: fails $tests"
	count=$((count + 1))
}

# The figures (common/core/report/figures.c).
mutant figures.c 's/return 0\.5;/return 1.0;/' \
	"test_sample_scale test_summary_pingpong test_e2e_pingpong" "ping-pong round trip not halved"
mutant figures.c 's|(window ? window : 1)|(window ? 1 : 1)|' \
	"test_sample_scale test_summary_pairs_add_up test_e2e_bw" "window not divided"
mutant figures.c 's/traffic == GDRB_TRAFFIC_BIDIR || //' \
	"test_bytes_per_iter test_summary_bidir_doubles test_e2e_bidir" "both directions not doubled"
mutant figures.c 's/ || traffic == GDRB_TRAFFIC_PINGPONG)/)/' \
	"test_bytes_per_iter test_summary_pingpong test_e2e_pingpong" "a round trip's message counted one way"
mutant figures.c '/^double gdrb_fig_bw_GBps/,/^}/ s/1e-3/1e-6/' "test_bw test_summary_pingpong test_e2e_bw" \
	"bandwidth in MB/s, not GB/s"
mutant figures.c 's|(double)size / out->avg_us|(double)size / out->max_us|' \
	"test_collective_geometry test_summary_collective" "algbw from the slowest rank, not the mean"
mutant figures.c 's|2\.0 \* (n - 1) / n|1.0 * (n - 1) / n|' "test_bus_factors test_coll_table" "allreduce factor (n-1)/n"
mutant figures.c 's|(double)(n - 1) / n|(double)n / n|' "test_bus_factors test_coll_table" "(n-1)/n factor 1"
mutant figures.c '/gdrb_bus_one/ s/return 1\.0;/return 0.5;/' "test_bus_factors test_coll_table" "factor 1 halved"
mutant figures.c 's|size / unit \* unit|size / elem * elem|' "test_coll_size test_coll_table_sizes" "blocked size not rounded to ranks"
mutant figures.c 's|blocked && nranks > 0|!blocked \&\& nranks > 0|' "test_coll_size test_coll_table_sizes" "blocked choice inverted"

# Each collective's bus factor and layout facts (common/core/coll/coll_table.c).
entry() { echo "/^const struct gdrb_coll_kind gdrb_coll_$1 = {/,/^};/"; }
mutant coll_table.c "$(entry allreduce) s/gdrb_bus_allreduce/gdrb_bus_spread/" test_coll_table "allreduce with (n-1)/n"
mutant coll_table.c "$(entry allgather) s/gdrb_bus_spread/gdrb_bus_one/" test_coll_table "allgather with 1"
mutant coll_table.c "$(entry reduce_scatter) s/gdrb_bus_spread/gdrb_bus_allreduce/" test_coll_table "reduce_scatter with 2(n-1)/n"
mutant coll_table.c "$(entry alltoall) s/gdrb_bus_spread/gdrb_bus_one/" test_coll_table "alltoall with 1"
mutant coll_table.c "$(entry gather) s/gdrb_bus_spread/gdrb_bus_one/" test_coll_table "gather with 1"
mutant coll_table.c "$(entry scatter) s/gdrb_bus_spread/gdrb_bus_allreduce/" test_coll_table "scatter with 2(n-1)/n"
mutant coll_table.c "$(entry bcast) s/gdrb_bus_one/gdrb_bus_spread/" test_coll_table "bcast with (n-1)/n"
mutant coll_table.c "$(entry reduce) s/gdrb_bus_one/gdrb_bus_allreduce/" test_coll_table "reduce with 2(n-1)/n"
mutant coll_table.c "$(entry barrier) s/GDRB_LAYOUT_NONE/GDRB_LAYOUT_FULL/" \
	"test_coll_table test_coll_table_sizes" "barrier with a payload"
mutant coll_table.c "$(entry alltoall) s/GDRB_LAYOUT_FULL/GDRB_LAYOUT_ONE_BUF/" \
	"test_coll_table test_coll_table_sizes" "alltoall not blocked"
mutant coll_table.c 's/k->layout == GDRB_LAYOUT_GATHER || //' \
	"test_coll_table test_coll_table_sizes" "allgather and gather not blocked"
mutant coll_table.c 's/ || k->layout == GDRB_LAYOUT_SCATTER//' \
	"test_coll_table test_coll_table_sizes" "reduce_scatter and scatter not blocked"
mutant coll_table.c 's/!(k->flags & GDRB_COLL_REDUCES)/(k->flags \& GDRB_COLL_REDUCES)/' \
	"test_coll_table test_coll_table_sizes" "allreduce and reduce blocked, alltoall not"
mutant coll_table.c 's/? dtype_size : 1;/? dtype_size : 4;/' \
	"test_coll_table test_coll_table_sizes" "bytes moved in 4-byte elements"

# The all row adds the pairs up (common/core/driver.c).
mutant driver.c 's/agg->bw_GBps += o->bw_GBps;/agg->bw_GBps = o->bw_GBps;/' \
	"test_summary_pairs_add_up" "the all row's bandwidth one pair's, not the sum"

pass "$count mutants, each caught"
