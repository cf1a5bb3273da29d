#!/bin/bash
# layers.sh: each layer of common/ includes only itself and the layers it may use
# (docs/architecture.md, "Layers"), read from its #include "..." lines, and a layer's
# internal headers only the files that may call them; and the check fails on a copy of the
# tree with one bad include, a duplicate header or a stale exception planted. Then the same
# rules read from the symbols of the built libraries (nm), shown failing on a planted use.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

# The layers each layer may include besides itself.
declare -A may=(
	[util]=""
	[sysinfo]="util"
	[mem]="util"
	[boot]="util"
	[core]="util boot mem sysinfo"
	[verbs]="util boot mem sysinfo core"
	[mpi]="util boot mem sysinfo core"
	[doctor]="util mem sysinfo core verbs"
	[catalog]="util sysinfo mem boot core verbs mpi nccl"
	[nccl]="util boot mem sysinfo core"
)

# Inside a layer, the headers that declare what one file offers the layer's others, and
# the files that may include each: the calls between them go one way. Verbs: p2p uses
# pipe, both use post; pairs uses setup and post; setup uses post.
declare -A internal=(
	[verbs_post.h]="verbs_post.c verbs_pipe.c verbs_p2p.c verbs_setup.c verbs_pairs.c"
	[verbs_pipe.h]="verbs_pipe.c verbs_p2p.c"
	[verbs_setup.h]="verbs_setup.c verbs_pairs.c"
)

# Known violations, "file header" and the reason for each (none today). A listed one that
# no longer occurs fails the test too, so that the list only shrinks.
declare -A exceptions=()

# sources DIR: the sources, headers and definitions under DIR's layers, at any depth (a
# layer may keep rooms: common/core/pairs/), one path relative to DIR a line.
sources() {
	(cd "$1" && find . -mindepth 2 \( -name '*.[ch]' -o -name '*.def' \) | sed 's|^\./||' | sort)
}

# check_tree DIR: print every include under DIR/<layer>/ (and its rooms) that the rules
# forbid, every header name found in two folders (one -I per folder would pick either) and
# every exception that no longer occurs; return 1 if there is any.
check_tree() {
	local dir=$1 bad=0 f rel layer base from to key
	local -A owner=() folder=() used=()
	for f in "$dir"/*.[ch] "$dir"/*.def; do
		[ -e "$f" ] || continue
		echo "common/${f##*/}: in no layer's folder"
		bad=1
	done
	while IFS= read -r rel; do
		layer=${rel%%/*}
		base=${rel##*/}
		if [ -z "${may[$layer]+set}" ]; then
			echo "common/$layer/: not a layer of the rules in tests/meta/layers.sh"
			bad=1
		elif [ -n "${owner[$base]+set}" ]; then
			echo "$base: in both common/${folder[$base]}/ and common/${rel%/*}/"
			bad=1
		fi
		owner[$base]=$layer
		folder[$base]=${rel%/*}
	done < <(sources "$dir")
	while IFS=: read -r rel base; do
		from=${rel%%/*}
		to=${owner[$base]:-}
		if [ -n "${internal[$base]+set}" ]; then
			case " ${internal[$base]} " in
			*" ${rel##*/} "*) ;;
			*)
				echo "common/$rel includes $base: only ${internal[$base]} may (the calls go one way)"
				bad=1
				;;
			esac
			continue
		fi
		# config.h and other headers from outside common/ belong to no layer
		if [ -z "$to" ] || [ "$to" = "$from" ]; then
			continue
		fi
		case " ${may[$from]} " in *" $to "*) continue ;; esac
		key="$rel $base"
		if [ -n "${exceptions[$key]+set}" ]; then
			used[$key]=1
			continue
		fi
		echo "common/$rel includes $base of $to: $from may include ${may[$from]:-no other layer}"
		bad=1
	done < <(cd "$dir" && sources . | tr '\n' '\0' |
		xargs -0 grep -H -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' -- |
		sed 's/:.*"\([^"]*\)"$/:\1/')
	for key in "${!exceptions[@]}"; do
		[ -n "${used[$key]+set}" ] ||
			{ echo "exception '$key' no longer occurs: remove it from tests/meta/layers.sh"; bad=1; }
	done
	return "$bad"
}

src=$top_srcdir/common
[ -d "$src/core" ] || fail "no $src/core"
report=$(check_tree "$src") || fail "common/ breaks the layers' rules:
$report"
pass "common/: every include follows the layers' rules, ${#exceptions[@]} known exception(s):"
for key in "${!exceptions[@]}"; do
	echo "  common/$key (${exceptions[$key]})"
done

# An exception that does not occur (as one will when its item is done) must fail too.
stale="core/driver.c gdrb_verbs.h"
if out=$(exceptions[$stale]="planted"; check_tree "$src"); then
	fail "planted a stale exception: not caught"
fi
grep -q "$stale" <<<"$out" || fail "planted a stale exception: the report does not name it: $out"
pass "planted a stale exception caught: $out"

# copy_tree: the tree's sources in $WORK/tree, for planting a fault.
copy_tree() {
	rm -rf "$WORK/tree"
	mkdir -p "$WORK/tree"
	(cd "$src" && sources . | tr '\n' '\0' | xargs -0 cp --parents -t "$WORK/tree")
}

# add_include FILE HEADER: a copy of the tree with FILE including HEADER.
add_include() {
	copy_tree
	printf '#include "%s"\n' "$2" >>"$WORK/tree/$1"
}

# caught WHAT FILE: the check fails on the planted copy with a line naming FILE.
caught() {
	local out
	if out=$(check_tree "$WORK/tree"); then
		fail "planted $1: not caught"
	fi
	grep -q "$2" <<<"$out" || fail "planted $1: the report does not name $2: $out"
	pass "planted $1 caught: $out"
}

# Each planted include: what it is, the file, the header.
while IFS='|' read -r what file header; do
	add_include "$file" "$header"
	caught "$what" "$file"
done <<'EOF_PLANTS'
core using verbs|core/driver.c|gdrb_verbs.h
mem using mpi|mem/stage.c|gdrb_coll.h
mpi using verbs|mpi/coll.c|gdrb_reg.h
nccl using verbs|nccl/nccl_log.c|gdrb_verbs.h
core using nccl|core/report/report.c|gdrb_nccl_log.h
core's pairs room using verbs|core/pairs/pairs.c|gdrb_verbs.h
verbs using mpi|verbs/gdrb_verbs.h|gdrb_boot_mpi.h
util using core|util/log.c|gdrb_opts.h
verbs posting calling the pipelined path (a circle)|verbs/verbs_post.c|verbs_pipe.h
the pipelined path using the setup's pieces|verbs/verbs_pipe.c|verbs_setup.h
mpi naming the catalogue|mpi/coll.c|gdrb_transports.h
EOF_PLANTS
copy_tree
cp "$WORK/tree/util/gdrb_size.h" "$WORK/tree/mem/"
caught "a header in two layers" gdrb_size.h
copy_tree
cp "$WORK/tree/core/pairs/gdrb_pairs.h" "$WORK/tree/core/coll/"
caught "a header in two rooms of a layer" gdrb_pairs.h
copy_tree
cp "$WORK/tree/util/log.c" "$WORK/tree/"
caught "a source outside the layers" log.c

# The same rules read from the built libraries: an object that uses (nm: U) a symbol that
# only a layer it may not use defines is an upward arrow, however the declaration came in
# (a header of the wrong layer, an extern written by hand). An object's layer is its
# source's folder (libgdrb_catalog.a holds objects of verbs/, mpi/ and nccl/).

# check_symbols LIBS...: print every such use in the libraries LIBS; return 1 if any.
check_symbols() {
	local bad=0 f base lib obj sym type from to allowed layer
	local -A owner=() defs=()
	while IFS= read -r f; do
		base=${f##*/}
		owner[${base%.c}]=${f%%/*}
	done < <(sources "$src" | grep '\.c$')
	# nm -P -A: "LIB[MEMBER.o]: SYMBOL TYPE ..."; automake names a member TARGET-SOURCE.o
	# where the library has flags of its own.
	local table
	table=$(nm -P -A -g "$@") || { echo "nm failed on $*"; return 1; }
	table=$(sed -n 's/^\([^[]*\)\[\([^]]*\)\.o\]: \([^ ]*\) \([A-Za-z]\).*/\1 \2 \3 \4/p' <<<"$table")
	while read -r lib obj sym type; do
		obj=${obj##*_a-}
		[ "$type" = U ] || defs[$sym]+="${owner[$obj]:-?} "
	done <<<"$table"
	while read -r lib obj sym type; do
		{ [ "$type" = U ] && [ -n "${defs[$sym]+set}" ]; } || continue
		obj=${obj##*_a-}
		from=${owner[$obj]:-}
		[ -n "$from" ] || { echo "${lib##*/}: member $obj.o has no source under common/"; bad=1; continue; }
		allowed=0
		for layer in ${defs[$sym]}; do
			case " $from ${may[$from]} " in *" $layer "*) allowed=1 ;; esac
		done
		[ "$allowed" = 1 ] && continue
		to=${defs[$sym]% }
		echo "common/$from/$obj.c (${lib##*/}) uses $sym of ${to// /, }: $from may use ${may[$from]:-no other layer}"
		bad=1
	done <<<"$table"
	return "$bad"
}

command -v nm >/dev/null 2>&1 || skip "no nm (binutils): the include rules hold; the symbol check cannot run"
libs=("$top_builddir"/common/*/*.a)
[ -e "${libs[0]}" ] || fail "no library under $top_builddir/common: build first"
report=$(check_symbols "${libs[@]}") || fail "the built libraries break the layers' rules:
$report"
pass "${#libs[@]} libraries of common/: no object uses a symbol of a layer it may not use"

# A planted use caught: an object of the util layer (named as util's log.c) that takes the
# address of the catalogue, put into a copy of util's library.
cc=${GDRB_FIG_CC:-cc}
mkdir -p "$WORK/lib/util"
cp "$top_builddir/common/util/libgdrb_util.a" "$WORK/lib/util/"
printf 'extern const void *const gdrb_opt_catalog[];\nconst void *planted_use(void);\nconst void *planted_use(void) { return gdrb_opt_catalog; }\n' >"$WORK/log.c"
$cc -c -o "$WORK/log.o" "$WORK/log.c" || fail "$cc cannot build the planted object"
ar q "$WORK/lib/util/libgdrb_util.a" "$WORK/log.o" 2>/dev/null || fail "ar cannot add the planted object"
planted=("$WORK/lib/util/libgdrb_util.a")
for f in "${libs[@]}"; do
	[ "${f##*/}" = libgdrb_util.a ] || planted+=("$f")
done
if out=$(check_symbols "${planted[@]}"); then
	fail "planted util using the catalogue by symbol: not caught"
fi
grep -q "common/util/log.c .* uses gdrb_opt_catalog of catalog" <<<"$out" ||
	fail "planted util using the catalogue by symbol: the report does not name it: $out"
pass "planted util using the catalogue by symbol caught: $out"
exit 0
