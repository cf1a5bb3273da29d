#!/bin/bash
# --describe (docs/describe.md): every benchmark binary built prints one JSON object and nothing
# else on stdout, exit 0, with the facts the tool reads instead of copies: its options are the
# ones --help lists, its memory kinds the ones --mem accepts (the test-only kinds of fake_mem
# included), its CSV schema version csv_schema.def's, its version --version's, all_pairs true
# for the all-pairs binaries (those whose --help has --rounds) and no other.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"

check=$WORK/check.py
cat >"$check" <<'PY'
import json, re, subprocess, sys
binary, schema_def = sys.argv[1], sys.argv[2]
out = subprocess.run([binary, "--describe"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
if out.returncode != 0 or out.stderr:
    sys.exit("%s --describe: exit %d, stderr %r" % (binary, out.returncode, out.stderr[:200]))
d = json.loads(out.stdout.decode("utf-8"))     # one document, nothing after it
assert d["describe_format"] == 1, d["describe_format"]
helptext = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, timeout=60).stdout.decode()
helped = re.findall(r"^  (?:-., )?(?:    )?--([a-z0-9-]+)", helptext, re.M)
names = [o["name"] for o in d["options"]]
assert names == helped, "options %s, --help %s" % (names, helped)
versions = re.findall(r"^GDRB_CSV_VERSION_END\(([0-9]+)\)$", open(schema_def).read(), re.M)
assert d["csv_schema"] == int(versions[-1]), d["csv_schema"]
ver = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, timeout=60).stdout.decode()
assert ver.strip().endswith("(gdrbench) " + d["version"]), (ver, d["version"])
assert d["all_pairs"] == ("--rounds" in helptext), d["all_pairs"]
if "mem" in names:
    bad = subprocess.run([binary, "--mem", "bogus"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, timeout=60)
    accepted = re.search(r"accepted: ([a-z, ]+)", bad.stderr.decode()).group(1).split(", ")
    kinds = [k["name"] for k in d["mem_kinds"]]
    assert kinds == accepted, "mem_kinds %s, --mem accepts %s" % (kinds, accepted)
    assert d["default_mem"] in kinds
    for k in d["mem_kinds"]:
        assert k["paths"] is None or (k["paths"] and k["paths"][0]["path"]), k
else:
    assert d["mem_kinds"] == [] and d["default_mem"] is None
print("%s: %s, layer %s, %d options, kinds %s" % (d["binary"], d["benchmark"], d["layer"], len(names),
      ",".join(k["name"] for k in d["mem_kinds"]) or "-"))
PY

n=0
for p in $(python3 "$top_srcdir/scripts/gen-options-doc" --list) tests/integration/fake_mem tests/integration/fake_transport; do
	case $p in */gdrb_doctor*) continue ;; esac
	[ -x "$top_builddir/$p" ] || continue
	python3 "$check" "$top_builddir/$p" "$top_srcdir/common/core/csv_schema.def" || fail "$p --describe"
	n=$((n + 1))
done
[ "$n" -gt 3 ] || skip "fewer than 4 benchmark binaries built"
pass "$n binaries describe themselves as their --help, --mem and --version say"

# The fake kinds, registered by test code, are described with their properties and paths.
"$top_builddir/tests/integration/fake_mem" --describe >"$WORK/fake.json" || fail "fake_mem --describe"
python3 - "$WORK/fake.json" <<'PY' || fail "fake_mem's kinds"
import json, sys
k = {m["name"]: m for m in json.load(open(sys.argv[1]))["mem_kinds"]}
assert [p["path"] for p in k["fake"]["paths"]] == ["direct"] and not k["fake"]["needs_gpu"]
assert [p["path"] for p in k["fakestaged"]["paths"]] == ["direct", "staged"], k["fakestaged"]
assert k["fakestaged"]["paths"][1]["reg"] == "staged" and k["fakegpu"]["needs_gpu"]
PY
pass "fake_mem: its registered kinds with their properties and paths"

# Options are read first: a bad one is refused as in a run, a path option changes the paths.
expect_refused "unknown option '--bogus'" "$top_builddir/tests/integration/fake_mem" --describe --bogus
"$top_builddir/tests/integration/fake_mem" --mem fakestaged --staging serial --describe >"$WORK/serial.json" || fail "--staging serial --describe"
grep -q '"path": "staged-serial"' "$WORK/serial.json" || { cat "$WORK/serial.json"; fail "--staging serial: no staged-serial path"; }
pass "--describe reads the other options first: --staging serial lists staged-serial"
