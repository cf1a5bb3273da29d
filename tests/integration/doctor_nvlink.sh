#!/bin/bash
# gdrb_doctor's NVLink state and speed (check 3, docs/doctor.md) on the simulated NVML
# (tests/support/simnvml): every link up passes each GPU, one link down fails that GPU naming
# the link, every link down warns, a state NVML cannot give warns; every link at one speed
# passes, a link slower than its GPU's others warns naming it, a speed NVML cannot give is "not
# known" (SKIP, never PASS), through the scoped field or an older NVML's per-link ones; NVML absent, failing or too old is
# "not known" (a SKIP item, never a PASS), a huge GPU count and links past NVML's maximum stay
# bounded, a fixture tree does not ask NVML, and the JSON carries the same, which gdrb
# inventory --sku h200 reads: all up passes, a link down fails naming the GPU, NVML failing
# fails as not known.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

bin=$top_builddir/bench/gdrb_doctor
simnvml=$top_builddir/tests/support/simnvml/lib
fx=$top_builddir/tests/fixtures
[ -x "$bin" ] || fail "gdrb_doctor not built"
[ -f "$simnvml/libnvidia-ml.so.1" ] || fail "no simulated NVML in $simnvml (make check builds it)"

# doctor NAME [OPTION...]: a live --fast run in front of the simulated NVML (the SIMNVML_*
# settings come from the caller's environment); the table in NAME.txt, stderr in NAME.err.
doctor() {
	local name=$1 rc
	shift
	LD_LIBRARY_PATH=$simnvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$bin" --fast "$@" \
		>"$WORK/$name.txt" 2>"$WORK/$name.err"
	rc=$?
	{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } || { cat "$WORK/$name.txt" "$WORK/$name.err"; fail "$name: exit $rc"; }
	if grep -q "simnvml: error" "$WORK/$name.err"; then
		cat "$WORK/$name.err"
		fail "$name: the simulated NVML reports a misuse"
	fi
}
# nvlink_items FILE VERDICT: how many NVLink state items (one per GPU) of that verdict the table
# holds; speed_items: the same of the speed items (one per GPU with links up).
nvlink_items() {
	grep -c "^ *$2 NVLink [0-9(]" "$WORK/$1.txt"
}
speed_items() {
	grep -c "^ *$2 NVLink speed " "$WORK/$1.txt"
}
# counted FILE ITEMS "VERDICT..." "COUNT..." WHAT: FILE holds COUNT ITEMS (nvlink_items or
# speed_items) of each VERDICT, else fail saying WHAT.
counted() {
	local got="" v
	for v in $3; do
		got="$got${got:+ }$("$2" "$1" "$v")"
	done
	[ "$got" = "$4" ] || { cat "$WORK/$1.txt"; fail "$5: $3 items: $got, expected $4"; }
}
# first FILE PATTERN: the first item of FILE's table matching PATTERN, for a pass line.
first() {
	grep -m1 -- "$2" "$WORK/$1.txt" | sed 's/^ *//'
}
has() {
	grep -q -- "$2" "$WORK/$1.txt" || { cat "$WORK/$1.txt"; fail "$1: no '$2' in the table"; }
}
json_nvlink() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["nvlink"]
print(d["asked"], d["known"], d["reported"], len(d["gpus"]),
      " ".join("%s/%s/%s/%s" % (g["up"], g["links"], ",".join(map(str, g["down"])) or "-",
                                ",".join(map(str, g["not_read"])) or "-") for g in d["gpus"]))' "$1"
}

# Every link up: each of the 8 GPUs passes, named as simulated, with its links' far end.
doctor up
counted up nvlink_items "PASS WARN FAIL" "8 0 0" "all up"
has up "PASS NVLink 0000:18:00.0 gdrbench simulated GPU (simnvml): 18 of 18 NVLinks up, NVLink 4.0, 18 to an NVSwitch, 0 to a GPU$"
pass "all 18 links up on 8 GPUs: 8 PASS, each said simulated"
counted up speed_items "PASS WARN SKIP" "8 0 0" "all up, their speed"
has up "PASS NVLink speed 0000:18:00.0 gdrbench simulated GPU (simnvml): 18 links up at 25000 MB/s each$"
pass "every link at one speed (25000 MB/s, simulated): 8 speed PASS"

# A link slower than its GPU's others (planted at half speed): that GPU warns naming the link;
# its state still passes and the other GPUs pass. (Check 3's own verdict is this machine's: it
# has no GPU on its PCI bus, so the check fails whatever NVML says.)
SIMNVML_SLOW=3:5 doctor slow
counted slow speed_items "WARN PASS" "1 7" "one slow link"
counted slow nvlink_items "PASS" "8" "one slow link, the links' state"
has slow "WARN NVLink speed 0000:48:00.0 gdrbench simulated GPU (simnvml): 1 of 18 links up slower than the GPU's fastest, 25000 MB/s: 5 at 12500 MB/s$"
pass "link 5 of GPU 3 at half speed: $(first slow 'WARN NVLink speed')"

# A speed NVML cannot give: not known, a SKIP item and never a PASS for that GPU; a slow link
# beside it still warns. A link down is left out of the speeds.
SIMNVML_GPUS=3 SIMNVML_SPEED_ERR=0:2,1:4 SIMNVML_SLOW=1:9 SIMNVML_DOWN=2:0 doctor speederr
has speederr "SKIP NVLink speed 0000:18:00.0 .*: 17 of 18 links up at 25000 MB/s; speed not known for link 2 (link 2: Unknown Error (NVML error 999))$"
has speederr "WARN NVLink speed 0000:28:00.0 .*: 1 of 18 links up slower than the GPU's fastest, 25000 MB/s: 9 at 12500 MB/s; speed not known for link 4 "
has speederr "PASS NVLink speed 0000:38:00.0 .*: 17 links up at 25000 MB/s each$"
[ "$(speed_items speederr PASS)" -eq 1 ] || fail "a speed not known: passed"
pass "a speed not known: SKIP naming the link; a slow link beside it still WARN; a link down left out"

# An NVML before scoped NVLink fields: the per-link fields give links 0..11 (a slow one among
# them is caught), links 12..17 are not known.
SIMNVML_GPUS=1 SIMNVML_SPEED_LEGACY=1 SIMNVML_SLOW=0:7 doctor legacy
has legacy "WARN NVLink speed 0000:18:00.0 .*: 1 of 18 links up slower than the GPU's fastest, 25000 MB/s: 7 at 12500 MB/s; speed not known for links 12, 13, 14, 15, 16, 17 (link 12: Not Supported (NVML error 3))$"
SIMNVML_GPUS=1 SIMNVML_SPEED_LEGACY=1 doctor legacy_even
has legacy_even "SKIP NVLink speed 0000:18:00.0 .*: 12 of 18 links up at 25000 MB/s; speed not known for links 12, "
pass "an NVML without scoped fields: links 0..11 read (a slow one caught), the rest not known"

# One link down: that GPU fails, naming the link; the others still pass.
SIMNVML_DOWN=3:5 doctor down
counted down nvlink_items "FAIL PASS" "1 7" "one link down"
has down "FAIL NVLink 0000:48:00.0 gdrbench simulated GPU (simnvml): 17 of 18 NVLinks up, down: 5, NVLink 4.0, 17 to an NVSwitch"
grep -q "^  3 gpus  *FAIL" "$WORK/down.txt" || fail "one link down: check 3 not FAIL"
pass "link 5 of GPU 3 down: $(first down 'FAIL NVLink')"

# Two links down on two GPUs, NVSwitch-less (GPU to GPU): both named.
SIMNVML_DOWN=0:0,7:17 SIMNVML_REMOTE=gpu doctor down2
has down2 "FAIL NVLink 0000:18:00.0 .*17 of 18 NVLinks up, down: 0, NVLink 4.0, 0 to an NVSwitch, 17 to a GPU"
has down2 "FAIL NVLink 0000:88:00.0 .*17 of 18 NVLinks up, down: 17,"

# Every link of a GPU down: a WARN (a PCIe card without its bridge looks the same).
all=$(for l in $(seq 0 17); do printf '2:%d,' "$l"; done)
SIMNVML_DOWN=${all%,} doctor alldown
has alldown "WARN NVLink 0000:38:00.0 .*: 0 of 18 NVLinks up, down: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,"
[ "$(nvlink_items alldown FAIL)" -eq 0 ] || fail "every link down: FAIL, expected WARN"
pass "every link of GPU 2 down: WARN"

# A state NVML cannot give (an error, or a value neither enabled nor disabled): WARN, link named.
SIMNVML_GPUS=2 SIMNVML_BAD=0:2 SIMNVML_ERR=1:4 doctor unread
has unread "WARN NVLink 0000:18:00.0 .*17 of 18 NVLinks up, not read: 2, .*link 2: state 7, neither enabled nor disabled"
has unread "WARN NVLink 0000:28:00.0 .*17 of 18 NVLinks up, not read: 4, .*link 4: Unknown Error (NVML error 999)"
pass "a link state not read: WARN naming the link and NVML's answer"

# No NVLink at all (PCIe cards): each GPU passes as having none.
SIMNVML_LINKS=0 SIMNVML_GPUS=2 doctor nolinks
has nolinks "PASS NVLink 0000:18:00.0 gdrbench simulated GPU (simnvml): no NVLink (NVML lists none)"

# Garbage from NVML: 40 links a GPU (past NVML_NVLINK_MAX_LINKS, 18) are never asked past
# link 17 (the simulator reports any such call, which doctor() fails on), and a count of
# 2^32 - 1 GPUs reads the first 64 and says so.
SIMNVML_GPUS=2 SIMNVML_LINKS=40 doctor manylinks
[ "$(nvlink_items manylinks PASS)" -eq 2 ] || { cat "$WORK/manylinks.txt"; fail "40 links: not 2 GPUs passing"; }
has manylinks "18 of 18 NVLinks up"
SIMNVML_GPUS=4294967295 doctor manygpus
has manygpus "WARN NVML counts 4294967295 GPUs; the first 64 are read"
[ "$(nvlink_items manygpus PASS)" -eq 64 ] || fail "2^32 - 1 GPUs: not 64 read"
SIMNVML_GPUS=4294967295 doctor manygpus_json --json
python3 -m json.tool "$WORK/manygpus_json.txt" >/dev/null || fail "2^32 - 1 GPUs: --json not valid"
pass "40 links a GPU: only links 0..17 asked; 2^32 - 1 GPUs: 64 read, the rest said"

# NVML not known: a library that does not load, NVML that fails to start, and (where this
# machine has no NVML of its own) none at all: a SKIP item, never a PASS.
mkdir -p "$WORK/broken" && printf 'not an ELF file\n' >"$WORK/broken/libnvidia-ml.so.1"
LD_LIBRARY_PATH=$WORK/broken "$bin" --fast >"$WORK/broken.txt" 2>&1
has broken "SKIP NVLink not known: libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) not loaded: "
[ "$(nvlink_items broken PASS)" -eq 0 ] || fail "NVML broken: an NVLink PASS"
SIMNVML_INIT=9 doctor noinit
has noinit "SKIP NVLink not known: nvmlInit: Driver Not Loaded (NVML error 9)"
[ "$(nvlink_items noinit PASS)" -eq 0 ] || fail "NVML not started: an NVLink PASS"
if ! { command -v ldconfig >/dev/null 2>&1 && ldconfig -p | grep -q 'libnvidia-ml\.so\.1 '; }; then
	"$bin" --fast >"$WORK/absent.txt" 2>&1
	has absent "SKIP NVLink not known: libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) not loaded: "
	"$bin" --fast --json >"$WORK/absent.json" 2>/dev/null
	[ "$(json_nvlink "$WORK/absent.json")" = "True False 0 0 " ] ||
		fail "NVML absent: JSON nvlink is '$(json_nvlink "$WORK/absent.json")'"
fi
nvml_old() {
	local dir=$1 name=$2
	shift 2
	LD_LIBRARY_PATH=$top_builddir/tests/support/simnvml/$dir "$bin" --fast "$@" >"$WORK/$name.txt" 2>&1
}
nvml_old nopci nopci
has nopci "SKIP NVLink not known: libnvidia-ml.so.1 has no nvmlDeviceGetPciInfo_v3: an NVIDIA driver older"
[ "$(nvlink_items nopci PASS)" -eq 0 ] || fail "NVML without a call gdrbench needs: an NVLink PASS"
pass "NVML absent, broken, failing or too old: NVLink not known (SKIP), never PASS"

# An NVML without the optional calls (version, far end): links still counted, the rest said unknown.
SIMNVML_GPUS=1 SIMNVML_DOWN=0:1 nvml_old old old
has old "FAIL NVLink 0000:18:00.0 .*: 17 of 18 NVLinks up, down: 1, version not known, 0 to an NVSwitch, 0 to a GPU, 17 far end not known$"
has old "SKIP NVLink speed 0000:18:00.0 .*: not known (link 0: no nvmlDeviceGetFieldValues in this NVML)$"
[ "$(speed_items old PASS)" -eq 0 ] || fail "NVML without field values: a speed PASS"
pass "NVML without the version, far-end and field-value calls: links counted, version, far end and speed not known"

# JSON: the same per GPU (up/links/down/not read).
SIMNVML_GPUS=3 SIMNVML_DOWN=1:5,1:6 SIMNVML_ERR=2:0 doctor json --json
got=$(json_nvlink "$WORK/json.txt")
[ "$got" = "True True 3 3 18/18/-/- 16/18/5,6/- 17/18/-/0" ] || { cat "$WORK/json.txt"; fail "JSON nvlink: '$got'"; }
pass "JSON nvlink: $got"
SIMNVML_GPUS=2 SIMNVML_SLOW=1:5 SIMNVML_SPEED_ERR=1:7 doctor json_speed --json
got=$(python3 -c 'import json, sys
for g in json.load(open(sys.argv[1]))["nvlink"]["gpus"]:
    s = {x["link"]: x["mbps"] for x in g["speeds"]}
    print(g["fastest_mbps"], ",".join(map(str, g["slower"])) or "-", s[0], s[5], s[7], g["speed_error"])' "$WORK/json_speed.txt")
[ "$got" = "25000 - 25000 25000 25000 None
25000 5 25000 12500 None link 7: Unknown Error (NVML error 999)" ] || { cat "$WORK/json_speed.txt"; fail "JSON speeds: '$got'"; }
pass "JSON nvlink speeds: each link up, the fastest, the slower ones, why not known"

# A fixture tree describes another node: NVML is not asked even where it answers.
[ -d "$fx/dgx8/sys" ] || fail "no fixture trees in $fx"
doctor fixture --json --sysfs-root "$fx/dgx8/sys" --procfs-root "$fx/dgx8/proc"
[ "$(json_nvlink "$WORK/fixture.txt")" = "False False 0 0 " ] || fail "fixture tree: NVML asked"
doctor fixture_table --sysfs-root "$fx/dgx8/sys" --procfs-root "$fx/dgx8/proc"
! grep -q "NVLink" "$WORK/fixture_table.txt" || fail "fixture tree: NVLink items"
pass "fixture tree: NVML not asked"

# gdrb inventory --sku h200 reads the doctor's "nvlink" as the doctor writes it: the live
# report of the simulated NVML, its GPUs on the buses of the hgx-h200 fixture, joined to that
# fixture's topology (this machine has no GPU of its own to join it to).
gdrb=$top_srcdir/scripts/gdrb
"$bin" --json --sysfs-root "$fx/hgx-h200/sys" --procfs-root "$fx/hgx-h200/proc" >"$WORK/h200.json" 2>/dev/null
buses=13,14,33,34,93,94,b3,b4
# inventory NAME RC PATTERN: the fixture's topology with NAME.txt's nvlink, judged against h200.
inventory() {
	local rc=0
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["nvlink"] = json.load(open(sys.argv[2]))["nvlink"]
json.dump(d, sys.stdout)' "$WORK/h200.json" "$WORK/$1.txt" >"$WORK/$1-joined.json" || fail "$1: joining the reports"
	"$gdrb" inventory --sku h200 "$WORK/$1-joined.json" >"$WORK/$1-inv.txt" 2>&1 || rc=$?
	[ "$rc" = "$2" ] || { cat "$WORK/$1-inv.txt"; fail "inventory $1: exit $rc, expected $2"; }
	grep -Eq "$3" "$WORK/$1-inv.txt" || { cat "$WORK/$1-inv.txt"; fail "inventory $1: no line matching '$3'"; }
	pass "inventory $1 -> $2: $(grep -E "$3" "$WORK/$1-inv.txt" | head -1)"
}
SIMNVML_BUSES=$buses doctor inv_up --json
inventory inv_up 0 '^PASS +nvlink +8 of 8 GPUs with 18 NVLinks up \(NVML: gdrbench simulated GPU \(simnvml\)\)$'
SIMNVML_BUSES=$buses SIMNVML_DOWN=3:11 doctor inv_down --json
inventory inv_down 1 '^FAIL +nvlink 0000:34:00\.0 17 of 18 NVLinks up \(down: 11\), expected 18$'
SIMNVML_BUSES=$buses SIMNVML_INIT=9 doctor inv_noinit --json
inventory inv_noinit 1 '^FAIL +nvlink +NVLink state not known: nvmlInit: Driver Not Loaded'
