#!/bin/bash
# inject.sh: the test hooks (common/util/gdrb_inject.h) never hide in a figure.
#  - a hook set without GDRB_TEST_HOOKS=1 is refused: exit 2, one line naming it;
#  - with the switch, a value that is not of the hook's form (a word where a rank goes, a
#    number past its type, a stray character) is refused the same way, never read as 0;
#  - an active hook names itself in the header and the note of every CSV row (main and all
#    pairs), and gdrb accept judges such results INVALID, never PASS;
#  - no other source reads a GDRB_ variable from the environment (and that check catches a
#    planted one).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"

unset GDRB_TEST_HOOKS GDRB_INJECT_CORRUPTION GDRB_INJECT_STALL GDRB_INJECT_HOSTS GDRB_INJECT_PAIRS_STOP \
	GDRB_INJECT_STEP_STOP GDRB_INJECT_STAGE_RACE GDRB_VERBS_MAX_MSG GDRB_INJECT_SYSFS_ROOT GDRB_INJECT_COUNTER \
	GDRB_INJECT_NCCL_ETC_CONF
one=$top_builddir/bench/gdrb_copy_bw        # one process, no MPI: the hooks are read before the GPU

# refused WHY VAR=VALUE...: gdrb_copy_bw with these variables exits 2 with one line naming
# the last variable, that matches the regex WHY.
refused() {
	local why=$1 rc=0 name
	shift
	name=${*: -1}
	name=${name%%=*}
	env "$@" "$one" -m 8 -t 0.01 >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = 2 ] || { cat "$WORK/err"; fail "$*: exit $rc, expected 2"; }
	[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "$*: not one line on stderr"; }
	grep -q "^gdrb_copy_bw: $name.*$why" "$WORK/err" || { cat "$WORK/err"; fail "$*: the line does not name $name ($why)"; }
	[ ! -s "$WORK/out" ] || fail "$*: wrote to stdout"
}

# Every hook, valid, without the switch.
for hook in GDRB_INJECT_CORRUPTION=1 GDRB_INJECT_STALL=1000/5 GDRB_INJECT_HOSTS=a,b GDRB_INJECT_PAIRS_STOP=2:2 \
	GDRB_INJECT_STEP_STOP=2:2 GDRB_INJECT_STAGE_RACE=out GDRB_VERBS_MAX_MSG=16K GDRB_INJECT_SYSFS_ROOT=/ \
	GDRB_INJECT_COUNTER=symbol_error+1@1 GDRB_INJECT_NCCL_ETC_CONF=/nccl.conf; do
	refused "is set: a test hook.*set GDRB_TEST_HOOKS=1" "$hook"
done
pass "each of the 10 hooks set without GDRB_TEST_HOOKS=1: exit 2, one line naming it"
refused "expected 1" GDRB_TEST_HOOKS=yes
refused "expected 1" GDRB_INJECT_CORRUPTION=1 GDRB_TEST_HOOKS=0
pass "GDRB_TEST_HOOKS other than 1: exit 2"

# Values not of the hook's form, with the switch.
n=0
while read -r hook; do
	refused "expected .*, got" GDRB_TEST_HOOKS=1 "$hook"
	n=$((n + 1))
done <<'BAD'
GDRB_INJECT_CORRUPTION=one
GDRB_INJECT_CORRUPTION=-1
GDRB_INJECT_CORRUPTION=+1
GDRB_INJECT_CORRUPTION=1x
GDRB_INJECT_CORRUPTION=2147483648
GDRB_INJECT_CORRUPTION=99999999999999999999
GDRB_INJECT_CORRUPTION=0x1
GDRB_INJECT_STALL=1e3
GDRB_INJECT_STALL=0
GDRB_INJECT_STALL=10000001
GDRB_INJECT_STALL=100/0
GDRB_INJECT_STALL=100/
GDRB_INJECT_STALL=100/x
GDRB_INJECT_STALL=100/18446744073709551616
GDRB_INJECT_STALL=100:5
GDRB_INJECT_HOSTS=a,,b
GDRB_INJECT_HOSTS=a,b,
GDRB_INJECT_HOSTS=a b
GDRB_INJECT_HOSTS=`id`
GDRB_INJECT_HOSTS=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
GDRB_INJECT_PAIRS_STOP=2
GDRB_INJECT_PAIRS_STOP=2:x
GDRB_INJECT_PAIRS_STOP=x:2
GDRB_INJECT_PAIRS_STOP=2:4294967296
GDRB_INJECT_STEP_STOP=1:0
GDRB_INJECT_STEP_STOP=1:2:3
GDRB_INJECT_STEP_STOP=rank1:2
GDRB_INJECT_STAGE_RACE=sideways
GDRB_INJECT_STAGE_RACE=ALL
GDRB_VERBS_MAX_MSG=0
GDRB_VERBS_MAX_MSG=1.5K
GDRB_VERBS_MAX_MSG=lots
GDRB_INJECT_SYSFS_ROOT=/nonexistent/sys
GDRB_INJECT_SYSFS_ROOT=/etc/hostname
GDRB_INJECT_COUNTER=symbol_error
GDRB_INJECT_COUNTER=symbol_error+1
GDRB_INJECT_COUNTER=symbol_error+0@1
GDRB_INJECT_COUNTER=symbol_error+1@0
GDRB_INJECT_COUNTER=symbol_error*1@1
GDRB_INJECT_COUNTER=+1@1
GDRB_INJECT_COUNTER=symbol error+1@1
GDRB_INJECT_COUNTER=symbol_error+1@2x
GDRB_INJECT_COUNTER=symbol_error-1@2+
GDRB_INJECT_COUNTER=symbol_error+1@2++
GDRB_INJECT_COUNTER=aer_dev_correctable/BadTLP+1@1
GDRB_INJECT_COUNTER=symbol_error+4611686018427387905@1
GDRB_INJECT_NCCL_ETC_CONF=nccl.conf
BAD
pass "$n malformed hook values with the switch: exit 2, one line naming the variable and the form"
# The refusal shows a bad value without its control bytes.
refused "expected out, in or all, got '?\\[2J?'" GDRB_TEST_HOOKS=1 "GDRB_INJECT_STAGE_RACE=$(printf '\033[2J\a')"
! grep -q $'[\x01-\x1f]' "$WORK/err" || fail "a control byte of a hook's value reached stderr"
pass "a hook value with control bytes shown without them"

# A check that no source but inject.c reads a GDRB_ variable: prints each that does.
stray_getenv() {
	grep -rn --include='*.c' --include='*.h' 'getenv *( *"GDRB_' "$1/common" "$1/bench" "$1/mpi" |
		grep -v '^[^:]*/common/util/inject\.c:' || true
}
out=$(stray_getenv "$top_srcdir")
[ -z "$out" ] || fail "sources read test hooks outside common/util/inject.c:
$out"
mkdir -p "$WORK/tree/common/core" "$WORK/tree/bench" "$WORK/tree/mpi"
printf 'static const char *s(void) { return getenv("GDRB_INJECT_NEW"); }\n' >"$WORK/tree/common/core/planted.c"
out=$(stray_getenv "$WORK/tree")
grep -q "planted.c" <<<"$out" || fail "a planted getenv(\"GDRB_INJECT_NEW\") not caught"
pass "no getenv(\"GDRB_...\") outside common/util/inject.c; a planted one caught"

need_mpi
lat=$top_builddir/mpi/gdrb_mpi_latency
# An empty hook is an unset one: no switch needed, nothing named.
GDRB_INJECT_STALL='' mpi 2 "$lat" -m 8 -t 0.01 --csv "$WORK/plain.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "an empty GDRB_INJECT_STALL refused"; }
! grep -q "test hook" "$WORK/out" "$WORK/plain.csv" || fail "an empty GDRB_INJECT_STALL named as a hook"
pass "an empty hook is no hook"

# An active hook in the header and in every row's note, before the label.
GDRB_TEST_HOOKS=1 GDRB_INJECT_STALL=1000/7 mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_STALL "$lat" -m 8,64 -t 0.01 \
	--label nightly --csv "$WORK/hook.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "a run with a hook"; }
grep -q '^# NOTE: test hook GDRB_INJECT_STALL=1000/7 (GDRB_TEST_HOOKS=1)' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the header does not name the active hook"; }
rows=$(csv_col "$WORK/hook.csv" note | grep -c '^test hook GDRB_INJECT_STALL=1000/7; nightly')
[ "$rows" = 2 ] || { cat "$WORK/hook.csv"; fail "$rows of 2 rows' notes name the hook before the label"; }
pass "an active hook named in the header and in the note of every row"

# gdrb accept never passes them: the same rule passes the run without the hook.
printf 'include quick\nrule lat mpi_latency lat_p50_us <= 1000000\n' >"$WORK/lat.profile"
for run in plain hook; do
	mkdir -p "$WORK/$run"
	cp "$WORK/$run.csv" "$WORK/$run/results.csv"
done
"$SCRIPTS/gdrb" accept "$WORK/plain" "$WORK/lat.profile" >"$WORK/acc.out" 2>&1 ||
	{ cat "$WORK/acc.out"; fail "accept: the run without a hook does not pass"; }
rc=0
"$SCRIPTS/gdrb" accept "$WORK/hook" "$WORK/lat.profile" >"$WORK/acc.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/acc.out"; fail "accept on a run with a hook: exit $rc, expected 3 (INVALID)"; }
grep -q '^INVALID: .*test hook GDRB_INJECT_STALL=1000/7 active' "$WORK/acc.out" ||
	{ cat "$WORK/acc.out"; fail "accept does not name the hook"; }
pass "gdrb accept: the run without a hook passes, the same with one is INVALID naming it"

# All pairs: the note of every row of pairs.csv names the hook too.
GDRB_TEST_HOOKS=1 GDRB_INJECT_HOSTS=a,a,b,b mpi 4 "$top_builddir/mpi/gdrb_mpi_pairs" -m 8 -t 0.01 \
	--granularity rail --csv "$WORK/pairs.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "all pairs with a hook"; }
grep -q '^# NOTE: test hook GDRB_INJECT_HOSTS=a,a,b,b' "$WORK/out" || { cat "$WORK/out"; fail "pairs: the header"; }
total=$(awk 'NR > 1' "$WORK/pairs.csv" | wc -l)
named=$(grep -c ',test hook GDRB_INJECT_HOSTS=a_a_b_b,' "$WORK/pairs.csv")
[ "$total" -gt 0 ] && [ "$named" = "$total" ] || { cat "$WORK/pairs.csv"; fail "pairs: $named of $total rows name the hook"; }
pass "all pairs: the hook in the header and in all $total rows' notes"
exit 0
