"""gdrb accept: every kind of rule (an absolute threshold with >=, <=, > and <, % of link, % of
staged with <= and >=, text in / = / !=) passes on the good fixture and fails on a bad one; every
shipped profile passes the good run and fails a bad one; a rule without rows is NODATA, a value
that is not a number INVALID (exit 3); the verdict files and the exit codes."""
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtool import accept, cli, common

DATA = gdrbtest.DATA


class Ran:
    def __init__(self, status, out, err, results):
        self.status, self.out, self.err = status, out, err
        self.results = results

    def verdict(self):
        with open(os.path.join(self.results, "verdict.json"), encoding="utf-8") as f:
            return json.load(f)

    def junit(self):
        return ET.parse(os.path.join(self.results, "verdict.xml")).getroot()

    def rule(self, name):
        """The two lines printed for rule NAME, joined."""
        lines = self.out.splitlines()
        for i, line in enumerate(lines):
            if line.split(":")[0].split()[-1:] == [name]:
                return line + " " + lines[i + 1].strip()
        raise AssertionError("rule %s not printed:\n%s" % (name, self.out))


class AcceptCase(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gdrb-accept-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def fixture(self, name, keep=None, edit=None):
        """A copy of tests/support/data/NAME; KEEP(line) drops the data lines it refuses, EDIT(line) rewrites them."""
        dst = os.path.join(self.work, "%s-%d" % (name, len(os.listdir(self.work))))
        shutil.copytree(str(DATA / name), dst)
        if keep or edit:
            path = os.path.join(dst, "results.csv")
            with open(path, encoding="utf-8") as f:
                header, *rows = f.read().splitlines()
            rows = [edit(r) if edit else r for r in rows if not keep or keep(r)]
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join([header] + rows) + "\n")
        return dst

    def profile(self, *rules):
        path = os.path.join(self.work, "rules-%d.profile" % len(os.listdir(self.work)))
        with open(path, "w", encoding="utf-8") as f:
            f.write("include quick\n" + "".join(r + "\n" for r in rules))
        return path

    def accept(self, *args):
        """gdrb accept ARGS in this process: exit status, stdout, stderr."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["accept"] + list(args), "")
        results = next((a for a in args if os.path.isdir(a)), "")
        return Ran(status, out.getvalue(), err.getvalue(), results)

    def judged(self, results, rule, *options):
        """Accept RESULTS against the one RULE; returns the run and the rule's JSON record."""
        ran = self.accept(*options, results, self.profile("rule r " + rule))
        self.assertIn(ran.status, (0, 1, 3), ran.err)
        return ran, ran.verdict()["rules"][0]

    def passes(self, results, rule, *options):
        ran, record = self.judged(results, rule, *options)
        self.assertEqual((ran.status, record["verdict"]), (0, "PASS"), ran.out + ran.err)
        self.assertTrue(ran.out.endswith("PASS: 1 rules, 1 passed, 0 failed, 0 without data\n"), ran.out)
        return ran, record

    def fails(self, results, rule, *options):
        ran, record = self.judged(results, rule, *options)
        self.assertEqual((ran.status, record["verdict"]), (1, "FAIL"), ran.out + ran.err)
        self.assertEqual(ran.verdict()["verdict"], "FAIL")
        self.assertEqual(len(ran.junit().findall(".//failure[@type='threshold']")), 1)
        return ran, record


class RuleKinds(AcceptCase):
    def test_absolute_threshold(self):
        rule = "write_bw bw_GBps >= 45 GB/s mem=device path=direct sizes=1M:"
        ran, _ = self.passes(self.fixture("good-run"), rule)
        self.assertIn("11 checks at 11 sizes (1MiB..1GiB), worst 47.33 GB/s against 45.00 GB/s at 1MiB", ran.rule("r"))
        ran, record = self.fails(self.fixture("bad-run"), rule)
        self.assertIn("3 of 11 checks failed: 4MiB: 41.10 GB/s < 45.00 GB/s; 8MiB: 41.20 GB/s < 45.00 GB/s; "
                      "16MiB: 41.40 GB/s < 45.00 GB/s", ran.rule("r"))
        self.assertEqual(record["failures"][0], {"size_bytes": 4194304, "value": 41.1, "threshold": 45,
                                                 "why": "41.10 GB/s < 45.00 GB/s"})

    def test_absolute_threshold_in_other_units(self):
        self.passes(self.fixture("good-run"), "write_lat lat_p99_us <= 5000 ns mem=device path=direct sizes=8")
        ran, _ = self.fails(self.fixture("bad-run"), "write_lat lat_p99_us <= 0.005 ms mem=device path=direct sizes=8")
        self.assertIn("8B: 7.900 us > 5.000 us", ran.rule("r"))
        ran, _ = self.passes(self.fixture("good-run"), "write_bw bw_GBps >= 380 Gb/s mem=host sizes=64M")
        self.assertIn("against 47.50 GB/s", ran.rule("r"))

    def test_a_failed_row_or_no_figure_fails(self):
        ran, _ = self.fails(self.fixture("bad-run"), "write_bw bw_GBps >= 45 GB/s mem=host sizes=1M:")
        self.assertIn("1GiB: status failed (gdrb-sweep: gdrb_write_bw exited 1", ran.rule("r"))
        ran, _ = self.fails(self.fixture("nofigure-staged"), "write_lat lat_p50_us <= 3 us mem=device path=direct")
        self.assertIn("8B: lat_p50_us is empty (no figure)", ran.rule("r"))

    def test_percent_of_link(self):
        rule = "write_bw bw_GBps >= 90% of link mem=device path=direct sizes=1M:"
        ran, _ = self.passes(self.fixture("good-run"), rule)
        self.assertIn("against 45.00 GB/s at 1MiB", ran.rule("r"))
        ran, _ = self.fails(self.fixture("bad-run"), rule)
        self.assertIn("4MiB: 41.10 GB/s < 45.00 GB/s (90% of 400 Gb/s)", ran.rule("r"))

    def test_strict_less_and_greater(self):
        """< and > fail on a value equal to the threshold, where <= and >= pass."""
        rule = "write_lat lat_p99_us < 5 us mem=device path=direct sizes=8"
        self.passes(self.fixture("good-run"), rule)
        ran, _ = self.fails(self.fixture("bad-run"), rule)
        self.assertIn("8B: 7.900 us >= 5.000 us", ran.rule("r"))
        ran, _ = self.fails(self.fixture("good-run"), "write_lat lat_p50_us < 1.627 us mem=device path=direct sizes=8")
        self.assertIn("1 of 1 check failed: 8B: 1.627 us >= 1.627 us", ran.rule("r"))
        self.passes(self.fixture("good-run"), "write_lat lat_p50_us <= 1.627 us mem=device path=direct sizes=8")
        rule = "write_bw bw_GBps > 45 GB/s mem=device path=direct sizes=1M:"
        self.passes(self.fixture("good-run"), rule)
        ran, _ = self.fails(self.fixture("bad-run"), rule)
        self.assertIn("3 of 11 checks failed: 4MiB: 41.10 GB/s <= 45.00 GB/s; 8MiB: 41.20 GB/s <= 45.00 GB/s; "
                      "16MiB: 41.40 GB/s <= 45.00 GB/s", ran.rule("r"))
        ran, _ = self.fails(self.fixture("bad-run"), "write_bw bw_GBps > 41.1 GB/s mem=device path=direct sizes=4M")
        self.assertIn("1 of 1 check failed: 4MiB: 41.10 GB/s <= 41.10 GB/s", ran.rule("r"))
        self.passes(self.fixture("bad-run"), "write_bw bw_GBps >= 41.1 GB/s mem=device path=direct sizes=4M")

    def test_link_rate_sources(self):
        rule = "write_bw bw_GBps >= 95% of link mem=device path=direct sizes=1G"
        self.passes(self.fixture("good-run"), rule)                      # meta.json: 400 Gb/s
        ran, _ = self.fails(self.fixture("good-run"), rule, "--link-rate", "800")
        self.assertIn("(95% of 800 Gb/s)", ran.rule("r"))
        nometa = self.fixture("good-run")
        os.unlink(os.path.join(nometa, "meta.json"))
        ran, _ = self.fails(nometa, rule)
        self.assertIn("no link rate recorded", ran.rule("r"))
        nic = self.fixture("good-run", edit=lambda r: r.replace(",mlx5_0:1,", ",mlx5_0:1 200 Gb/s,"))
        os.unlink(os.path.join(nic, "meta.json"))
        ran, _ = self.passes(nic, rule)
        self.assertIn("against 23.75 GB/s", ran.rule("r"))
        gbps = self.fixture("good-run", edit=lambda r: r.replace(",mlx5_0:1,InfiniBand,,", ",mlx5_0:1,InfiniBand,200.000,"))
        ran, _ = self.passes(gbps, rule)
        self.assertIn("against 23.75 GB/s", ran.rule("r"))

    def test_percent_of_staged(self):
        rule = "write_lat lat_p99_us <= 50% of staged mem=device sizes=8"
        ran, _ = self.passes(self.fixture("good-run"), rule)
        self.assertIn("worst 2.315 us against 7.011 us (50% of staged) at 8B", ran.rule("r"))
        ran, _ = self.fails(self.fixture("bad-run"), rule)
        self.assertIn("8B: direct 7.900 us > 7.011 us (50% of staged 14.02 us)", ran.rule("r"))
        ran, _ = self.fails(self.fixture("nofigure-staged"), "write_lat lat_p50_us <= 50% of staged mem=device sizes=8")
        self.assertIn("8B: direct lat_p50_us is empty (no figure)", ran.rule("r"))

    def test_percent_of_staged_at_least(self):
        """The shipped gdr-bandwidth rule: direct bandwidth at least the staged path's."""
        rule = "write_bw bw_GBps >= 100% of staged mem=device sizes=1M:"
        ran, _ = self.passes(self.fixture("good-run"), rule)
        self.assertIn("11 checks at 11 sizes (1MiB..1GiB), worst 48.00 GB/s against 17.47 GB/s (100% of staged) "
                      "at 64MiB", ran.rule("r"))
        self.passes(self.fixture("bad-run"), rule)        # its dip to 41 GB/s stays above staging
        ran, record = self.fails(self.fixture("slow-gdr-run"), rule)
        self.assertIn("11 of 11 checks failed: 1MiB: direct 14.20 GB/s < 16.39 GB/s (100% of staged 16.39 GB/s); ",
                      ran.rule("r"))
        why = {f["size_bytes"]: f["why"] for f in record["failures"]}
        self.assertEqual(len(why), 11)
        self.assertEqual(why[1 << 30], "direct status failed (gdrb-sweep: gdrb_write_bw exited 1; "
                                       "see logs/04-write_bw-device.log)")

    def test_staged_pairs_need_both_paths(self):
        rule = "write_lat lat_p50_us <= 50% of staged mem=device sizes=8:64"
        ran, _ = self.fails(self.fixture("good-run", keep=lambda r: not r.startswith("write_lat,verbs,device,staged")), rule)
        self.assertIn("8B: no staged row at this size", ran.rule("r"))
        ran, _ = self.fails(self.fixture("good-run", keep=lambda r: not r.startswith("write_lat,verbs,device,direct")), rule)
        self.assertIn("8B: no direct row at this size", ran.rule("r"))

    def test_text_in(self):
        self.passes(self.fixture("good-run"), "write_bw reg in dmabuf,peermem mem=device path=direct")
        ran, _ = self.fails(self.fixture("good-run"), "mpi_bw reg in dmabuf,peermem mem=device path=direct")
        self.assertIn("8B: reg is 'mpi-cuda'", ran.rule("r"))
        ran, _ = self.fails(self.fixture("bad-run"), "write_bw quality in ok,noisy mem=host")
        self.assertIn("1GiB: status failed", ran.rule("r"))

    def test_text_equal(self):
        ran, record = self.passes(self.fixture("good-run"), "write_bw status = ok mem=host")
        self.assertIn("status 'ok' at 8B", ran.rule("r"))
        self.assertEqual(record["worst"]["value"], "ok")
        ran, record = self.fails(self.fixture("bad-run"), "write_bw status = ok mem=host")
        self.assertIn("1 of 28 checks failed: 1GiB: status is 'failed'", ran.rule("r"))
        self.assertEqual(record["failures"][0]["value"], "failed")

    def test_text_not_equal(self):
        self.passes(self.fixture("good-run"), "write_bw status != failed")
        ran, _ = self.fails(self.fixture("bad-run"), "write_bw status != failed")
        self.assertIn("1GiB: status is 'failed'", ran.rule("r"))

    def test_nodata(self):
        rule = "write_lat lat_p50_us <= 3 us mem=device path=direct sizes=8"
        self.passes(self.fixture("good-run"), rule)
        ran, record = self.judged(self.fixture("good-run", keep=lambda r: not r.startswith("write_lat,")), rule)
        self.assertEqual((ran.status, record["verdict"], record["checked"]), (1, "NODATA", 0))
        self.assertIn("no data: no row of write_lat with mem=device path=direct, 8B in the results", ran.rule("r"))
        self.assertTrue(ran.out.endswith("FAIL: 1 rules, 0 passed, 0 failed, 1 without data\n"), ran.out)
        self.assertEqual(len(ran.junit().findall(".//failure[@type='nodata']")), 1)

    def test_invalid_values(self):
        rules = self.profile("rule lat-p50 write_lat lat_p50_us <= 3 us mem=device path=direct sizes=8",
                             "rule gdr-lat write_lat lat_p50_us <= 50% of staged mem=device sizes=8")
        good = self.fixture("good-run")
        ran = self.accept(good, rules)
        self.assertEqual(ran.status, 0, ran.out + ran.err)
        for kind, column, value in (("nan", "lat_p50_us", "nan"), ("text", "lat_p50_us", "abc"),
                                    ("negative", "lat_p50_us", "-5"), ("hex", "lat_p50_us", "0x10"),
                                    ("size", "size_bytes", "8x")):
            with self.subTest(value=value):
                run = self.fixture("invalid-" + kind)
                ran = self.accept(run, rules)
                self.assertEqual(ran.status, 3, ran.out + ran.err)
                why = "not a non-negative integer" if column == "size_bytes" else "not a finite non-negative decimal number"
                where = "%s/results.csv:2: %s '%s' is %s" % (run, column, value, why)
                self.assertIn("INVALID %s\n" % where, ran.out)
                self.assertIn("1 of 1 check read a value that is not a number: " + where, ran.rule("lat-p50"))
                self.assertTrue(ran.out.endswith("INVALID: 2 rules, 0 passed, 0 failed, 0 without data, 2 invalid "
                                                 "(1 value not a number of its column: the results cannot be judged)\n"))
                v = ran.verdict()
                self.assertEqual((v["verdict"], v["rules"][0]["verdict"], v["rules"][1]["verdict"]),
                                 ("INVALID", "INVALID", "INVALID"))
                self.assertEqual(v["invalid_values"][0]["line"], 2)
                self.assertEqual(v["invalid_values"][0]["column"], column)
                self.assertEqual(v["invalid_values"][0]["value"], value)
                junit = ran.junit()
                self.assertEqual((junit.get("failures"), junit.get("errors")), ("0", "2"))
                self.assertEqual(len(junit.findall(".//error[@type='invalid']")), 2)

    def test_invalid_link_rate_column(self):
        run = self.fixture("good-run", edit=lambda r: r.replace(",mlx5_0:1,InfiniBand,,", ",mlx5_0:1,InfiniBand,fast,"))
        ran, record = self.judged(run, "write_bw bw_GBps >= 90% of link mem=device path=direct sizes=1G")
        self.assertEqual((ran.status, record["verdict"]), (3, "INVALID"))
        self.assertIn("link_gbps 'fast' is not a finite non-negative decimal number", ran.out)
        # --link-rate: the column is not read at all.
        self.passes(run, "write_bw bw_GBps >= 90% of link mem=device path=direct sizes=1G", "--link-rate", "400")

    def test_values_past_a_double_or_in_other_digits_are_invalid_never_a_pass(self):
        """float() reads 400 nines as inf (>= any threshold), int() refuses 5000 digits with a
        ValueError, and both take Unicode digits: each is an INVALID value with its line."""
        size_col = common.schema().index["size_bytes"]
        bw_col = common.schema().index["bw_GBps"]
        for column, value in (("bw_GBps", "9" * 400), ("bw_GBps", "\uff14\uff15"), ("bw_GBps", "1e999"),
                              ("bw_GBps", "4" + "0" * 40 + ".5"), ("size_bytes", "9" * 5000),
                              ("size_bytes", "\uff18"), ("size_bytes", "1" * 21)):
            with self.subTest(column=column, value=value[:12]):
                def edit(row, first=[True]):
                    f = row.split(",")
                    if f[:4] == ["write_bw", "verbs", "device", "direct"] and f[size_col] == "1048576" and first[0]:
                        first[0] = False
                        f[size_col if column == "size_bytes" else bw_col] = value
                    return ",".join(f)
                run = self.fixture("good-run", edit=edit)
                for rule in ("write_bw bw_GBps >= 45 GB/s mem=device path=direct sizes=1M:",
                             "write_bw bw_GBps <= 1000000 GB/s mem=device path=direct"):
                    ran, record = self.judged(run, rule)
                    self.assertEqual((ran.status, record["verdict"], ran.verdict()["verdict"]),
                                     (3, "INVALID", "INVALID"), ran.out + ran.err)
                    self.assertRegex(ran.out, r"INVALID %s/results.csv:\d+: %s '" % (re.escape(run), column))

    def test_json_numbers_are_finite(self):
        """JSON has no NaN or Infinity: a number that is not finite is null in verdict.json."""
        self.assertEqual([accept.json_num(v) for v in (1.5, 45.0, float("inf"), float("nan"))],
                         ["1.5", "45", "null", "null"])

    def test_rates_past_a_double_are_no_rate(self):
        """A port rate of 400 digits (meta.json, the nic column) would make '% of link' inf: it is
        no rate, and the rule fails (never passes) until --link-rate gives one."""
        huge = "4" + "0" * 400
        run = self.fixture("good-run")
        meta = os.path.join(run, "meta.json")
        with open(meta, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r'("rate_gbps": ?)[0-9.]+', r"\g<1>" + huge, text)
        text = re.sub(r'("link_rate_gbps": ?)[0-9.]+', r"\g<1>" + huge, text)
        with open(meta, "w", encoding="utf-8") as f:
            f.write(text)
        csv = os.path.join(run, "results.csv")
        with open(csv, encoding="utf-8") as f:
            rows = f.read()
        i_gbps, i_nic = common.schema().index["link_gbps"], common.schema().index["nic"]

        def no_rate(row):
            f = row.split(",")
            f[i_gbps] = ""
            if f[i_nic]:
                f[i_nic] = "mlx5_0:1 %s Gb/s" % huge
            return ",".join(f)
        header, *data = rows.splitlines()
        with open(csv, "w", encoding="utf-8") as f:
            f.write("\n".join([header] + [no_rate(r) for r in data]) + "\n")
        ran, record = self.judged(run, "write_bw bw_GBps <= 1000% of link mem=device path=direct sizes=1G")
        self.assertEqual((ran.status, record["verdict"]), (1, "FAIL"), ran.out + ran.err)
        self.assertIn("no link rate recorded", ran.out)

    def test_simulated_gpu_is_never_a_pass(self):
        def simulated(row):
            f = row.split(",")
            if f[2] == "device":
                f[common.schema().index["gpu"]] = "gdrbench simulated GPU (simgpu)"
            return ",".join(f)
        ran = self.accept(self.fixture("good-run", edit=simulated), "ib-ndr400")
        self.assertEqual(ran.status, 1, ran.out + ran.err)
        self.assertRegex(ran.out, r"\nSIMULATED: 8 rules, .*gdrbench simulated GPU \(simgpu\), which proves behaviour")
        self.assertEqual(ran.verdict()["verdict"], "SIMULATED")
        self.assertEqual(ran.junit().get("failures"), "8")

    def test_ranks_that_shared_a_gpu_are_said_with_the_verdict(self):
        note = common.schema().index["note"]

        def shared(row):
            f = row.split(",")
            if f[2] == "device":
                f[note] = "nightly; 2 ranks share GPU 0000:17:00.0 on node3 (MPS off)"
            return ",".join(f)
        ran = self.accept(self.fixture("good-run", edit=shared), "ib-ndr400")
        self.assertEqual(ran.status, 0, ran.out + ran.err)
        self.assertRegex(ran.out, r"\nPASS: 8 rules, .*; ranks shared a GPU \(2 ranks share GPU "
                                  r"0000:17:00\.0 on node3 \(MPS off\)\): a GPU figure that fails")
        self.assertEqual(ran.verdict()["gpu_shared"], "2 ranks share GPU 0000:17:00.0 on node3 (MPS off)")
        plain = self.accept(self.fixture("good-run"), "ib-ndr400")
        self.assertNotIn("shared a GPU", plain.out)
        self.assertIsNone(plain.verdict()["gpu_shared"])

    def test_a_row_measured_with_a_test_hook_is_never_judged(self):
        note = common.schema().index["note"]

        def hooked(row):
            f = row.split(",")
            if f[0] == "copy_bw":       # a row no rule of the profile reads
                f[note] = "test hook GDRB_INJECT_STALL=300000/1; nightly"
            return ",".join(f)
        run = self.fixture("good-run", edit=hooked)
        ran = self.accept(run, "ib-ndr400")
        self.assertEqual(ran.status, 3, ran.out + ran.err)
        self.assertRegex(ran.out, r"\nINVALID: 8 rules, 8 passed, .*measured with the test hook "
                                  r"GDRB_INJECT_STALL=300000/1 active \(GDRB_TEST_HOOKS=1\)")
        v = ran.verdict()
        self.assertEqual((v["verdict"], v["test_hook"]), ("INVALID", "test hook GDRB_INJECT_STALL=300000/1"))
        junit = ran.junit()
        self.assertEqual((junit.get("failures"), junit.get("errors")), ("0", "8"))
        self.assertEqual(len(junit.findall(".//error[@type='test-hook']")), 8)
        # The same rows without the hook pass.
        self.assertEqual(self.accept(self.fixture("good-run"), "ib-ndr400").status, 0)


class Profiles(AcceptCase):
    def test_good_and_bad_runs_against_ndr(self):
        ran = self.accept(self.fixture("good-run"), "ib-ndr400")
        self.assertEqual(ran.status, 0, ran.out + ran.err)
        self.assertTrue(ran.out.endswith("PASS: 8 rules, 8 passed, 0 failed, 0 without data\n"))
        self.assertRegex(ran.err, r"^gdrb-accept: verdict in .*/verdict.json and .*/verdict.xml\n$")
        ran = self.accept(self.fixture("bad-run"), "ib-ndr400")
        self.assertEqual(ran.status, 1)
        self.assertTrue(ran.out.endswith("FAIL: 8 rules, 4 passed, 4 failed, 0 without data\n"))
        junit = ran.junit()
        self.assertEqual((junit.get("tests"), junit.get("failures"), junit.get("errors")), ("8", "4", "0"))

    # Each shipped profile's verdict on each fixture, rule by rule. The 200 Gb/s profiles judge
    # the runs as if measured on a 200 Gb/s port (--link-rate 200). v1-run, v2-run and v3-run,
    # bad-run's rows in versions 1, 2 and 3 of the CSV schema, get bad-run's verdicts.
    VERDICTS = {
        "gdr-effectiveness": {
            "good-run": "PPP", "bad-run": "PPP", "slow-gdr-run": "FFF",
            "v1-run": "PPP", "v2-run": "PPP", "v3-run": "PPP"},
        "ib-ndr400": {
            "good-run": "PPP PPPPP", "bad-run": "PPP FFFPF", "slow-gdr-run": "FFF PFFFF",
            "v1-run": "PPP FFFPF", "v2-run": "PPP FFFPF", "v3-run": "PPP FFFPF"},
        "ib-hdr200": {
            "good-run": "PPP PPPPP", "bad-run": "PPP FPPPF", "slow-gdr-run": "FFF PFFFF",
            "v1-run": "PPP FPPPF", "v2-run": "PPP FPPPF", "v3-run": "PPP FPPPF"},
        "roce-400g": {
            "good-run": "PPP PPPPP", "bad-run": "PPP FFFPP", "slow-gdr-run": "FFF PFFFP",
            "v1-run": "PPP FFFPP", "v2-run": "PPP FFFPP", "v3-run": "PPP FFFPP"},
        "roce-200g": {
            "good-run": "PPP PPPPP", "bad-run": "PPP FPPPP", "slow-gdr-run": "FFF PFFFP",
            "v1-run": "PPP FPPPP", "v2-run": "PPP FPPPP", "v3-run": "PPP FPPPP"},
    }

    def test_every_shipped_profile_passes_the_good_run_and_fails_the_bad_ones(self):
        shipped = sorted(n[:-len(".profile")] for n in os.listdir(str(gdrbtest.SCRIPTS / "profiles")))
        # quick and full have no rules; pairs judges the all-pairs matrices (test_pairs.py);
        # nccl-gdr NCCL's rows (test_nccl.py); the hgx-* node profiles a node's rows (test_sku.py).
        nodes = ["hgx-a100", "hgx-b200", "hgx-h100", "hgx-h200"]
        self.assertEqual(sorted(list(self.VERDICTS) + ["full", "nccl-gdr", "pairs", "quick"] + nodes), shipped)
        word = {"P": "PASS", "F": "FAIL"}
        for name, runs in self.VERDICTS.items():
            options = ["--link-rate", "200"] if "200" in name else []
            for run, expected in runs.items():
                with self.subTest(profile=name, run=run):
                    ran = self.accept(*options, self.fixture(run), name)
                    got = [r["verdict"] for r in ran.verdict()["rules"]]
                    self.assertEqual(got, [word[c] for c in expected.replace(" ", "")], ran.out)
                    self.assertEqual(ran.status, 1 if "F" in expected else 0, ran.out + ran.err)
                    self.assertEqual(ran.verdict()["verdict"], "FAIL" if "F" in expected else "PASS")

    def test_gdr_effectiveness_fails_a_gdr_that_does_not_pay(self):
        ran = self.accept(self.fixture("slow-gdr-run"), "gdr-effectiveness")
        self.assertEqual(ran.status, 1, ran.out + ran.err)
        self.assertIn("1GiB: status failed (gdrb-sweep: gdrb_write_bw exited 1", ran.rule("gdr-registered"))
        self.assertIn("10 of 10 checks failed: 8B: direct 6.627 us > 5.316 us (50% of staged 10.63 us); ",
                      ran.rule("gdr-latency"))
        self.assertIn("11 of 11 checks failed: 1MiB: direct 14.20 GB/s < 16.39 GB/s", ran.rule("gdr-bandwidth"))
        self.assertTrue(ran.out.endswith("FAIL: 3 rules, 0 passed, 3 failed, 0 without data\n"), ran.out)

    def test_quiet_prints_the_overall_line(self):
        ran = self.accept("-q", self.fixture("bad-run"), "gdr-effectiveness")
        self.assertEqual((ran.status, ran.out, ran.err), (0, "PASS: 3 rules, 3 passed, 0 failed, 0 without data\n", ""))

    def test_verdict_and_junit_elsewhere(self):
        run = self.fixture("good-run")
        v, j = os.path.join(self.work, "v.json"), os.path.join(self.work, "v.xml")
        ran = self.accept("--verdict", v, "--junit", j, run, "ib-ndr400")
        self.assertEqual(ran.status, 0)
        self.assertEqual(sorted(os.listdir(run)), ["meta.json", "results.csv"])
        with open(v) as f:
            self.assertEqual(json.load(f)["profile"], "ib-ndr400")
        ET.parse(j)


class Refusals(AcceptCase):
    def refused(self, pattern, *args):
        ran = self.accept(*args)
        self.assertEqual((ran.status, ran.out), (2, ""), ran.err)
        self.assertEqual(ran.err.count("\n"), 1, ran.err)
        self.assertRegex(ran.err, pattern)

    def test_bad_usage_and_input(self):
        bad = self.fixture("bad-run")
        self.refused("expected RESULTS_DIR PROFILE", bad)
        self.refused("unknown option '--bogus'", "--bogus", bad, "quick")
        self.refused("--link-rate: expected the port rate in Gb/s, e.g. 400, got 'fast'", "--link-rate", "fast", bad, "quick")
        self.refused("--link-rate: .* got '0'", "--link-rate", "0", bad, "quick")
        for rate in ("inf", "nan", "1e999", "9" * 400, "\uff14\uff10\uff10", "1_000", "0.0"):
            self.refused("--link-rate: expected the port rate in Gb/s, e.g. 400, got '", "--link-rate", rate, bad, "quick")
        self.refused("--verdict: expected a file name", bad, "quick", "--verdict")
        self.refused("no-such-dir: no such results directory", os.path.join(self.work, "no-such-dir"), "quick")
        self.refused("nosuch: no such profile; expected a file or a shipped profile: .*ib-ndr400", bad, "nosuch")
        self.refused("quick.profile: no rule lines", bad, "quick")
        self.refused("malformed-header/results.csv:1: not a gdrbench results CSV", str(DATA / "malformed-header"), "ib-ndr400")
        self.refused("malformed-row/results.csv:4: has 40 fields, the schema has 46", str(DATA / "malformed-row"), "ib-ndr400")
        row16 = "mpi_latency,mpi,host,direct,host,,,,,all,16,"
        for v, width in ((1, 37), (2, 40)):
            short = self.fixture("v%d-run" % v, edit=lambda r: r.rsplit(",", 1)[0] if r.startswith(row16) else r)
            self.refused("v%d-run-[0-9]+/results.csv:3: has %d fields, version %d of the schema has %d$"
                         % (v, width - 1, v, width), short, "ib-ndr400")
        with open(os.path.join(bad, "meta.json"), "w") as f:
            f.write("{\"nodes\": [}")
        self.refused("meta.json: not JSON: ", bad, "ib-ndr400")

    def test_results_csv_is_read_as_every_file_of_evidence(self):
        """results.csv is never followed through a link, and a last row without its line end (a
        write cut short) is refused: the one reader of evidence (gdrbtool/evidence.py)."""
        run = self.fixture("good-run")
        elsewhere = os.path.join(self.work, "elsewhere.csv")
        os.rename(os.path.join(run, "results.csv"), elsewhere)
        os.symlink(elsewhere, os.path.join(run, "results.csv"))
        self.refused(r"results\.csv: cannot read: a symbolic link \(never followed\)$", run, "ib-ndr400")
        self.refused(r"good-run-[0-9]+/results\.csv: cannot read: a symbolic link \(never followed\)$",
                     os.path.join(run, "results.csv"), "ib-ndr400")
        os.unlink(os.path.join(run, "results.csv"))
        with open(elsewhere) as f:
            text = f.read()
        with open(os.path.join(run, "results.csv"), "w") as f:
            f.write(text[:-1])
        self.refused(r"results\.csv:%d: has no line end: the file was cut while it was written" % text.count("\n"),
                     run, "ib-ndr400")

    def test_a_verdict_that_cannot_be_written(self):
        run = self.fixture("good-run")
        where = os.path.join(self.work, "no-such-dir", "verdict.json")
        ran = self.accept("--verdict", where, run, "ib-ndr400")
        # The verdict is printed all the same, then which file could not be written; exit 1.
        self.assertEqual(ran.status, 1)
        self.assertRegex(ran.out, r"\nPASS: [0-9]+ rules, [0-9]+ passed, 0 failed, 0 without data\n$")
        self.assertRegex(ran.out, r"^PASS ")
        self.assertEqual(ran.err, "%s: cannot write: No such file or directory\n" % where)
        self.assertEqual(sorted(os.listdir(run)), ["meta.json", "results.csv"])   # the JUnit file neither
        ran = self.accept("-q", "--verdict", where, run, "ib-ndr400")
        self.assertEqual(ran.status, 1)
        self.assertRegex(ran.out, r"^PASS: [0-9]+ rules, [0-9]+ passed, 0 failed, 0 without data\n$")
        # An INVALID verdict keeps its 3: the results could not be judged, whatever was written.
        bad = self.fixture("good-run")
        with open(os.path.join(bad, "results.counters.csv"), "w") as f:
            f.write("another,header\n")
        ran = self.accept("--verdict", where, bad, self.profile("counters errors"))
        self.assertEqual(ran.status, 3, ran.out + ran.err)
        self.assertRegex(ran.out, r"\nINVALID: [0-9]+ rules, .*, 1 invalid \(1 row of evidence that could not be read")
        self.assertEqual(ran.err, "%s: cannot write: No such file or directory\n" % where)

    def test_planted_links_never_followed(self):
        victim = os.path.join(self.work, "victim")
        with open(victim, "w") as f:
            f.write("precious")
        for name in ("verdict.json", "verdict.xml"):
            run = self.fixture("good-run")
            os.symlink(victim, os.path.join(run, name))
            os.symlink(victim, os.path.join(run, name + ".tmp"))
            ran = self.accept(run, "ib-ndr400")
            self.assertEqual(ran.status, 1)
            self.assertRegex(ran.out, r"\nPASS: .*\n$")
            self.assertEqual(ran.err, "%s/%s: cannot write: a symbolic link (never followed; remove it or choose "
                                      "another file)\n" % (run, name))
            with open(victim) as f:
                self.assertEqual(f.read(), "precious")
            self.assertEqual(sorted(os.listdir(run)), sorted(["meta.json", "results.csv", name, name + ".tmp"]))
            shutil.rmtree(run)

    def test_a_pipe_named_by_an_option_is_written_in_place(self):
        run = self.fixture("good-run")
        fifo = os.path.join(self.work, "junit.fifo")
        os.mkfifo(fifo)
        got = []

        def read():
            with open(fifo, "rb") as f:
                got.append(f.read())
        reader = threading.Thread(target=read)
        reader.start()
        ran = self.accept("--junit", fifo, run, "ib-ndr400")
        reader.join(30)
        self.assertEqual(ran.status, 0, ran.err)
        self.assertTrue(got and got[0].startswith(b"<?xml"), got)
        # The same pipe in the results directory, not named by an option: refused, not waited on.
        os.rename(fifo, os.path.join(run, "verdict.xml"))
        ran = self.accept(run, "ib-ndr400")
        self.assertEqual(ran.status, 1)
        self.assertEqual(ran.err, "%s/verdict.xml: cannot write: not a regular file (remove it or choose another "
                                  "file)\n" % run)

    def test_control_characters_from_the_data_never_reach_the_terminal(self):
        """An escape sequence in a CSV value (status, note, a value that is not a number) or a GPU
        name is printed as '?': the verdict on the terminal and in verdict.txt stays what it says."""
        esc = "\x1b]0;owned\x07\x1b[2J\x1b[1A\x08\x9b31m"

        def edit(line):
            if line.startswith("write_lat,verbs,device,direct,") and ",all,8," in line:
                f = line.split(",")
                f[31], f[34] = "failed" + esc, "note" + esc
                f[15] = "2" + esc
                return ",".join(f)
            return line
        run = self.fixture("good-run", edit=edit)
        profile = self.profile("rule s write_lat status = ok mem=device path=direct sizes=8",
                               "rule v write_lat lat_p99_us <= 100 mem=device path=direct sizes=8")
        for quiet in ((), ("-q",)):
            ran = self.accept(*quiet, run, profile)
            self.assertEqual(ran.status, 3, ran.out + ran.err)
            for c in esc:
                if c not in "]0;owned[2J1A31m":
                    self.assertNotIn(c, ran.out + ran.err)
        ran = self.accept(run, profile)
        self.assertIn("status is 'failed?]0;owned??[2J?[1A??31m'", ran.out)
        self.assertIn("lat_p99_us '2?]0;owned??[2J?[1A??31m' is not", ran.out)
        with open(os.path.join(run, "verdict.json")) as f:
            self.assertIn("status is 'failed", json.load(f)["rules"][0]["message"])

    def test_help(self):
        ran = self.accept("--help")
        self.assertEqual(ran.status, 0)
        self.assertTrue(ran.out.startswith("Check a results directory against the rules of a profile"))
        self.assertIn("--link-rate GBITS", ran.out)


class Pieces(unittest.TestCase):
    def test_margin_is_negative_when_failing(self):
        self.assertGreater(accept.margin(50, ">=", 45), 0)
        self.assertLess(accept.margin(40, ">=", 45), 0)
        self.assertLess(accept.margin(7.9, "<=", 5), 0)
        self.assertEqual(accept.margin(0.5, "<=", 0), -0.5)

    def test_selection_text(self):
        from gdrbtool import profile
        rule = profile.Rule("f:1", "r", "write_bw", "bw_GBps", ">=", "abs", 45.0, "45 GB/s",
                            {"pair": "all", "mem": "device", "sizes": "1048576:inf"})
        r = accept.RuleResult.of(rule)
        self.assertEqual(r.filters_text(), "mem=device, 1MiB and up")
        self.assertTrue(r.size_ok(1 << 30) and not r.size_ok(8))
        rule.filters["sizes"] = "8,64,1048576"
        self.assertEqual(accept.RuleResult.of(rule).filters_text(), "mem=device, 8B, 64B, 1MiB")


if __name__ == "__main__":
    unittest.main()


class Repeats(AcceptCase):
    """A check's attempts (a repeat's rows, note "attempt N"): a one-off dip passes on the
    repeat with every attempt shown; a steady fault fails every attempt; attempts that spread
    beyond a rule's spread= are INVALID (unstable); a repeat that measured nothing is no pass."""

    RULE = "write_bw bw_GBps >= 45 GB/s mem=device path=direct sizes=1M:"

    def repeated(self, *attempts):
        """bad-run with, for each of ATTEMPTS (attempt number, bw text or "", status), its
        device direct and staged rows of 4MiB..16MiB measured again."""
        def edit(attempt, bw, status):
            def row(line):
                f = line.split(",")
                f[19] = bw if f[3] == "direct" else f[19]
                f[31] = status
                f[34] = "acceptance; attempt %d" % attempt
                return ",".join(f)
            return row
        dst = self.fixture("bad-run")
        path = os.path.join(dst, "results.csv")
        with open(path, encoding="utf-8") as f:
            rows = f.read().splitlines()[1:]
        picked = [r for r in rows if r.startswith(("write_bw,verbs,device,direct,", "write_bw,verbs,device,staged,"))
                  and r.split(",")[10] in ("4194304", "8388608", "16777216")]
        self.assertEqual(len(picked), 6)
        with open(path, "a", encoding="utf-8") as f:
            for a in attempts:
                f.write("".join(edit(*a)(r) + "\n" for r in picked))
        # meta.json's steps say which lines each attempt wrote: the first, all rows; each repeat, six.
        with open(os.path.join(dst, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        meta["steps"] = [{"n": 1, "attempt": 1, "binary": "gdrb_write_bw", "rows": len(rows), "filled": 0}] + [
            {"n": 1, "attempt": a[0], "binary": "gdrb_write_bw", "rows": 6, "filled": 0} for a in attempts]
        with open(os.path.join(dst, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        return dst

    def test_a_one_off_dip_passes_on_the_repeat(self):
        ran, record = self.passes(self.repeated((2, "47.000000", "ok")), self.RULE)
        self.assertIn("3 checks measured more than once, 3 failed and passed on a repeat: "
                      "4MiB: attempts 1: 41.10 GB/s (fail), 2: 47.00 GB/s, spread 14%", ran.rule("r"))
        self.assertEqual((record["repeated_checks"], record["passed_on_repeat"], record["unstable_checks"]), (3, 3, 0))
        self.assertEqual(record["attempts"][0], {
            "size_bytes": 4194304, "outcome": "pass", "spread_pct": 14.3552, "attempts": [
                {"attempt": 1, "pass": False, "value": 41.1, "why": "41.10 GB/s < 45.00 GB/s"},
                {"attempt": 2, "pass": True, "value": 47, "why": ""}]})
        # Without the attempts' rows, the same rule fails: the repeat is what passed it.
        self.fails(self.fixture("bad-run"), self.RULE)
        # Steps in meta.json that do not account for the rows: no attempts, each row on its own.
        results = self.repeated((2, "47.000000", "ok"))
        with open(os.path.join(results, "results.csv"), "a", encoding="utf-8") as f:
            f.write(self.picked_again(results))
        ran, _ = self.fails(results, self.RULE)
        self.assertIn("its steps do not account for the rows", ran.err)
        self.assertNotIn("passed on a repeat", ran.out)

    def picked_again(self, results):
        with open(os.path.join(results, "results.csv"), encoding="utf-8") as f:
            return f.read().splitlines()[-1] + "\n"

    def test_a_steady_fault_fails_every_attempt(self):
        ran, record = self.fails(self.repeated((2, "41.000000", "ok"), (3, "41.300000", "ok")), self.RULE)
        self.assertIn("3 of 11 checks failed: 4MiB: every attempt failed: attempts 1: 41.10 GB/s (fail), "
                      "2: 41.00 GB/s (fail), 3: 41.30 GB/s (fail), spread 1%", ran.rule("r"))
        self.assertEqual([a["outcome"] for a in record["attempts"]], ["fail"] * 3)

    def test_a_repeat_that_measured_nothing_is_no_pass(self):
        ran, _ = self.fails(self.repeated((2, "", "failed")), self.RULE)
        self.assertIn("4MiB: every attempt failed: attempts 1: 41.10 GB/s (fail), 2: no figure (fail: status failed "
                      "(acceptance; attempt 2))",
                      ran.rule("r"))

    def test_an_unstable_figure_is_invalid_with_a_spread_bound(self):
        results = self.repeated((2, "47.000000", "ok"))
        ran, record = self.judged(results, self.RULE + " spread=10%")
        self.assertEqual((ran.status, record["verdict"], ran.verdict()["verdict"]), (3, "INVALID", "INVALID"))
        self.assertIn("unstable: 3 of 11 checks measured figures whose attempts differ by more than spread=10%: "
                      "4MiB: attempts 1: 41.10 GB/s (fail), 2: 47.00 GB/s, spread 14%, beyond spread=10%", ran.rule("r"))
        self.assertIn("3 unstable figures whose attempts differ beyond the rule's spread=", ran.out)
        # Within the bound: judged as without it.
        self.passes(results, self.RULE + " spread=15%")

    def test_percent_of_staged_pairs_each_attempt(self):
        rule = "write_bw bw_GBps >= 260% of staged mem=device sizes=4M:16M"
        ran, _ = self.fails(self.fixture("bad-run"), rule)
        ran, record = self.passes(self.repeated((2, "47.000000", "ok")), rule)
        self.assertIn("failed and passed on a repeat", ran.rule("r"))

    def test_spread_needs_a_numeric_rule_and_a_percentage(self):
        for rule, why in (("write_bw reg in dmabuf mem=device spread=10%", "spread= bounds a numeric figure's"),
                          ("write_bw bw_GBps >= 45 GB/s spread=0%", "spread=: expected a percentage above 0%"),
                          ("write_bw bw_GBps >= 45 GB/s spread=x", "spread=: expected a percentage above 0%")):
            ran = self.accept(self.fixture("good-run"), self.profile("rule r " + rule))
            self.assertEqual(ran.status, 2, ran.out)
            self.assertIn(why, ran.err)
            self.assertEqual(len(ran.err.splitlines()), 1, ran.err)
