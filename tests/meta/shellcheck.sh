#!/bin/bash
# Every shell script of the project, contrib/'s Slurm and NHC scripts too, is clean
# under `shellcheck -S warning` (the project's .shellcheckrc applies). Skips where shellcheck
# is not installed. A script with a planted warning shows the check can fail.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v shellcheck >/dev/null 2>&1 || skip "shellcheck not installed"

cd "$top_srcdir" || fail "cannot enter $top_srcdir"
files=()
for f in scripts/* scripts/measure/* scripts/lib/* scripts/gpu-bundle/* tests/*/*.sh tests/cluster/netns/* contrib/*/* autogen.sh \
	.ci/run .ci/fresh-root .ci/debian-package; do
	[ -f "$f" ] || continue
	case $f in
	*.sh | *.nhc) files+=("$f") ;;
	*) head -n 1 "$f" | grep -q '^#!.*\(bash\|/sh\)' && files+=("$f") ;;
	esac
done
[ "${#files[@]}" -ge 10 ] || fail "found only ${#files[@]} shell scripts: ${files[*]}"

# The checker must catch a warning: a variable used but never set, a cd that may fail.
printf '#!/bin/bash\ncd /nonexistent\necho "$never_set"\n' >"$WORK/planted.sh"
! shellcheck -S warning "$WORK/planted.sh" >/dev/null 2>&1 || fail "shellcheck passes a script with planted warnings"

shellcheck -S warning -x "${files[@]}" || fail "shellcheck -S warning reports the problems above"
pass "shellcheck -S warning clean: ${#files[@]} scripts (${files[*]})"
