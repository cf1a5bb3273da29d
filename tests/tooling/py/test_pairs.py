"""gdrb accept's "pairs" rules on the all-pairs matrices (generated: tests/tooling/py/pairs_fixtures.py):
each rule PASSes on the healthy matrix and FAILs on its bad one, naming the suspect node, link
or rail, and saying when a node cannot be told from its links; bad profile lines and bad
matrices are refused in one line (exit 2); a 2048 x 2048 matrix is judged in seconds."""
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import gdrbtest  # noqa: F401  (sys.path)
import pairs_fixtures as fx
from gdrbtool import cli, common, facts, pairs, plot, profile

HAVE_GNUPLOT = shutil.which("gnuplot") is not None

RUN = "run gdrb_mpi_pairs mem=host,device\n"


class PairsCase(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gdrb-pairs-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def results(self, **kw):
        d = os.path.join(self.work, "r%d" % len(os.listdir(self.work)))
        fx.write(d, **kw)
        return d

    def profile(self, *lines):
        path = os.path.join(self.work, "p%d.profile" % len(os.listdir(self.work)))
        with open(path, "w") as f:
            f.write(RUN + "".join(line + "\n" for line in lines))
        return path

    def accept(self, results, *lines):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["accept", results, self.profile(*lines)], "")
        verdict = None
        if os.path.isfile(os.path.join(results, "verdict.json")):
            with open(os.path.join(results, "verdict.json")) as f:
                verdict = json.load(f)
        return status, out.getvalue(), err.getvalue(), verdict

    def verdict(self, results, expect, line="pairs bw below=80%median size=8M"):
        status, out, err, v = self.accept(results, line)
        self.assertEqual((status, v["rules"][0]["verdict"]), ({"PASS": 0, "FAIL": 1, "NODATA": 1}[expect], expect),
                         out + err)
        return out, v["rules"][0]


class Rules(PairsCase):
    def test_healthy_passes(self):
        out, rule = self.verdict(self.results(), "PASS")
        self.assertIn("pairs-host-8388608-direct: 56 pairs, none below", out)
        self.assertEqual(rule["suspects"], [])

    def test_slow_node_named_both_directions(self):
        out, rule = self.verdict(self.results(scenario="node", slow=5), "FAIL")
        self.assertIn("14 of 56 pairs below", out)
        self.assertIn("suspects: node n05 (both directions, 42% of median on 7 of 7 pairs)", out)
        self.assertEqual([(s["kind"], s["ranks"]) for s in rule["suspects"]], [("node", [5])])

    def test_slow_link_named_one_direction_only(self):
        out, rule = self.verdict(self.results(scenario="link", src=3, dst=6), "FAIL")
        self.assertIn("suspects: link n03 -> n06 only (41% of median)", out)
        self.assertNotIn("node", rule["message"])
        out, _ = self.verdict(self.results(scenario="link2", src=3, dst=6), "FAIL")
        self.assertIn("suspects: link n03 <-> n06 (both directions, 42% of median)", out)

    def test_slow_rail_named_on_every_node(self):
        out, rule = self.verdict(self.results(n=16, scenario="rail", gpus=2, slow=1), "FAIL")
        self.assertIn("suspects: rail GPU1/mlx5_1 on every node (8 of 8 nodes", out)
        self.assertEqual([s["kind"] for s in rule["suspects"]], ["rail"])
        out, _ = self.verdict(self.results(n=16, scenario="rail", gpus=2, slow=9), "PASS")

    def test_node_that_cannot_be_told_from_its_link(self):
        out, rule = self.verdict(self.results(scenario="lonely", slow=5, peer=2), "FAIL")
        self.assertIn("node n05 or link n02 <-> n05: cannot tell (n05's only measured peer is n02", out)
        self.assertEqual(rule["suspects"][0]["kind"], "ambiguous")
        out, _ = self.verdict(self.results(n=2, scenario="link", src=0, dst=1), "FAIL")
        self.assertIn("node n00, node n01 or the link between them: cannot tell (neither n00 nor n01 has another "
                      "measured peer (n = 2)", out)

    def test_slow_round_is_not_eight_links(self):
        out, rule = self.verdict(self.results(scenario="round", slow=3), "FAIL")
        self.assertIn("suspects: round 3 (every pair i -> i+3 low: 8 of 8 pairs, 42% of median): what ran at the "
                      "same time", out)
        self.assertEqual([s["kind"] for s in rule["suspects"]], ["round"])

    def test_partly_bad_node_is_not_called_a_node_or_a_link(self):
        d = self.results()
        path = os.path.join(d, "pairs-host-8388608-direct.csv")
        cells = fx.matrix(8)
        for dst in (0, 1, 2):          # n04 slow to 3 of its 7 peers
            cells[4][dst] *= 0.4
        fx.write_matrix(path, cells)
        out, _ = self.verdict(d, "FAIL")
        self.assertIn("node n04 or its links: sends low with 3 of 7 peers", out)

    def test_shipped_profile_names_the_node(self):
        d = self.results(scenario="node", slow=3)
        fx.write(d, scenario="node", slow=3, metric="lat", size=8)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["accept", d, "pairs"], ""), 1)
        self.assertIn("node n03 (both directions, 42% of median on 7 of 7 pairs)", out.getvalue())
        self.assertIn("node n03 (both directions, 3.0x best on 7 of 7 pairs)", out.getvalue())
        self.assertTrue(out.getvalue().endswith("FAIL: 2 rules, 0 passed, 2 failed, 0 without data\n"))

    def test_most_ranks_low_is_the_fabric_not_a_list_of_nodes(self):
        out, rule = self.verdict(self.results(), "FAIL", "pairs bw below=100%best")
        self.assertIn("suspects: the fabric, not one node: 8 of 8 ranks are low on most of their pairs", out)
        self.assertEqual([s["kind"] for s in rule["suspects"]], ["fabric"])

    def test_a_whole_host_of_gpus_is_one_node(self):
        d = self.results(n=16, gpus=2)
        cells = fx.matrix(16, gpus=2)
        for s in range(16):
            for t in range(16):
                if s != t and ({s, t} & {6, 7}):
                    cells[s][t] *= 0.4
        fx.write_matrix(os.path.join(d, "pairs-host-8388608-direct.csv"), cells)
        out, rule = self.verdict(d, "FAIL")
        self.assertIn("suspects: node n03 (all 2 GPUs, both directions, 40% of median on 30 of 30 pairs)", out)

    def test_node_low_in_one_direction_and_the_node_share(self):
        d = self.results()
        path = os.path.join(d, "pairs-host-8388608-direct.csv")
        cells = fx.matrix(8)
        for dst in range(8):
            if dst != 2:
                cells[2][dst] *= 0.4           # n02 sends slowly, receives well
        for dst in (0, 1, 2):
            cells[4][dst] *= 0.4               # n04 slow to 3 of its 7 peers
        fx.write_matrix(path, cells)
        out, _ = self.verdict(d, "FAIL")
        self.assertIn("node n02 (sends, 40% of median on 7 of 7 pairs)", out)
        self.assertIn("node n04 or its links: sends low with", out)
        out, _ = self.verdict(d, "FAIL", "pairs bw below=80%median node=40%")
        self.assertIn("node n04 (sends, 40% of median on 3 of 7 pairs)", out)

    def test_missing_cells_are_not_measured_not_low(self):
        out, _ = self.verdict(self.results(scenario="missing"), "PASS")
        self.assertIn("(11 not measured)", out)

    def test_latency_against_the_best_pair(self):
        line = "pairs lat above=2.1xbest size=8"
        self.verdict(self.results(metric="lat", size=8), "PASS", line)
        out, _ = self.verdict(self.results(metric="lat", size=8, scenario="node", slow=2), "FAIL", line)
        self.assertIn("node n02 (both directions, 3.1x best on 7 of 7 pairs)", out)

    def test_best_reference_and_filters(self):
        d = self.results(scenario="node", slow=1)
        self.verdict(d, "FAIL", "pairs bw below=93%best")
        self.verdict(d, "PASS", "pairs bw below=30%best")
        self.verdict(d, "NODATA", "pairs bw below=80%median mem=device")
        self.verdict(d, "NODATA", "pairs bw below=80%median size=8")
        self.verdict(d, "NODATA", "pairs bw below=80%median path=staged")

    def test_without_rank_table_ranks_are_numbered(self):
        out, _ = self.verdict(self.results(scenario="node", slow=5, ranks=False), "FAIL")
        self.assertIn("node rank 5 (both directions", out)

    def test_memory_kind_from_pairs_csv_when_the_name_has_none(self):
        d = self.results(scenario="node", mem="")
        with open(os.path.join(d, "pairs.csv"), "w") as f:
            f.write(pairs.pairs_header() + "\nmpi_pairs,mpi,device,direct,,bw,8388608,1,0,1" + ",," * 8 + "\n")
        self.verdict(d, "FAIL", "pairs bw below=80%median mem=device")
        self.verdict(d, "NODATA", "pairs bw below=80%median mem=host")


class Simulated(PairsCase):
    """Matrices measured on the test suite's simulated GPU prove behaviour, never speed."""
    ROW = "\nmpi_pairs,mpi,device,staged,staged,bw,8388608,1,0,1,n00,n01,0,0,,,,,5,1.500,,ok,0,,,%s,t,v\n"

    def simulated(self, note):
        d = self.results()
        with open(os.path.join(d, "pairs.csv"), "w") as f:
            f.write(pairs.pairs_header() + self.ROW % note)
        return d

    def test_healthy_matrices_on_a_simulated_gpu_never_pass(self):
        d = self.simulated("rounds 2 of 7 sampled by seed 1; simulated GPU: gdrbench simulated GPU (simgpu)")
        self.assertEqual(pairs.simulated_gpu(d), "gdrbench simulated GPU (simgpu)")
        status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
        self.assertEqual((status, v["verdict"]), (1, "SIMULATED"), out + err)
        self.assertIn("SIMULATED: 1 rules", out)
        self.assertIn("measured on gdrbench simulated GPU (simgpu), which proves behaviour, never speed", out)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(cli.main(["report", d], ""), 0)
        with open(os.path.join(d, "summary.md")) as f:
            md = f.read()
        self.assertIn("**Verdict: SIMULATED**", md)
        self.assertIn("Measured on gdrbench simulated GPU (simgpu), the test suite's simulated GPU", md)

    def test_the_same_matrices_measured_on_real_memory_pass(self):
        d = self.simulated("a label")
        self.assertEqual(pairs.simulated_gpu(d), "")
        status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
        self.assertEqual((status, v["verdict"]), (0, "PASS"), out + err)

    def test_matrices_of_ranks_that_shared_a_gpu_say_so(self):
        d = self.simulated("a label; 3 ranks share GPU 0000:3B:00.0 on n00 (MPS off)")
        self.assertEqual(pairs.gpu_shared(d), "3 ranks share GPU 0000:3B:00.0 on n00 (MPS off)")
        status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
        self.assertEqual((status, v["verdict"], v["gpu_shared"]),
                         (0, "PASS", "3 ranks share GPU 0000:3B:00.0 on n00 (MPS off)"), out + err)
        self.assertIn("ranks shared a GPU (3 ranks share GPU", out)
        self.assertEqual(pairs.gpu_shared(self.simulated("a label; the ranks share GPU memory")), "")

    def test_matrices_measured_with_a_test_hook_are_never_judged(self):
        # The binary's note where GDRB_INJECT_HOSTS named the hosts (its commas made '_').
        d = self.simulated("test hook GDRB_INJECT_HOSTS=a_a_b_b; a label")
        self.assertEqual(pairs.test_hook(d), "test hook GDRB_INJECT_HOSTS=a_a_b_b")
        status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
        self.assertEqual((status, v["verdict"], v["test_hook"]),
                         (3, "INVALID", "test hook GDRB_INJECT_HOSTS=a_a_b_b"), out + err)
        self.assertIn("measured with the test hook GDRB_INJECT_HOSTS=a_a_b_b active", out)
        # A label that only mentions the words is a label.
        self.assertEqual(pairs.test_hook(self.simulated("about the test hook GDRB_X")), "")


class PairsRuleBench(PairsCase):
    def test_a_pairs_rule_judges_the_profiles_all_pairs_benchmark(self):
        find = gdrbtest.described_bins(os.path.join(self.work, "bin"), ("gdrb_write_pairs", "gdrb_mpi_pairs"))
        for run, bench in (("run gdrb_write_pairs mem=host", "write_pairs"), ("", "mpi_pairs")):
            with self.subTest(run=run):
                path = os.path.join(self.work, "%s.profile" % bench)
                with open(path, "w") as f:
                    f.write(run + "\npairs bw below=80%median\n")
                if run:
                    self.assertEqual([r.bench for r in profile.load(path, find).rules], [bench])
                else:   # no run line: the rule names the benchmark it wanted
                    with self.assertRaises(common.Stop) as cm:
                        profile.load(path, find)
                    self.assertIn("benchmark 'mpi_pairs' is not run by this profile", cm.exception.message)

    def test_all_pairs_is_the_binary_not_its_bench_name(self):
        """A run line renamed with bench= stays all-pairs; a benchmark whose name ends in _pairs
        is not all-pairs unless its binary is: the sweep and the profile ask the binary."""
        from gdrbtool import sweep_plan
        path = os.path.join(self.work, "renamed.profile")
        with open(path, "w") as f:
            f.write("run gdrb_mpi_pairs mem=host bench=fabric\nrun gdrb_mpi_bw mem=host bench=bw_pairs\n"
                    "pairs bw below=80%median\n")
        # The binaries are made up: each answers --describe as gdrbtest.describe_doc shapes it.
        find = gdrbtest.described_bins(os.path.join(self.work, "bin"), ("gdrb_mpi_pairs", "gdrb_mpi_bw"))
        prof = profile.load(path, find)
        self.assertEqual([(r.bench, r.all_pairs) for r in prof.runs], [("fabric", True), ("bw_pairs", False)])
        self.assertEqual([r.bench for r in prof.rules], ["fabric"])
        for run in prof.runs:
            step = sweep_plan.Step(1, find(run.binary), run.binary, run.bench, "mpi", "mpi", "host",
                                   "8", "", "", "", "", "", "", facts=facts.describe(find(run.binary)))
            self.assertEqual(sweep_plan.is_pairs(step), run.all_pairs, run.bench)

    def test_a_binary_that_cannot_describe_itself_is_one_line(self):
        """A binary whose --describe fails, or answers what is not its document: one line naming it,
        exit 2 (the tool never goes on with facts it guessed)."""
        bin_dir = os.path.join(self.work, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        cases = (("exit 3", "exit 3"), ("echo 'not json'", "its answer is not JSON"),
                 ("echo '[1]'", "its answer is not a JSON object"),
                 ("echo '{\"describe_format\": 7}'", "describe_format 7, this tool reads 1"),
                 ("echo '{\"describe_format\": 1, \"mem_kinds\": []}'", "no str 'benchmark' in its answer"),
                 ("printf 'gdrb_x: bad \\033[2J\\n' >&2; exit 2", "exit 2: gdrb_x: bad ?[2J"))
        for n, (body, said) in enumerate(cases):
            path = os.path.join(bin_dir, "gdrb_broken%d" % n)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n%s\n" % body)
            os.chmod(path, 0o755)
            with self.subTest(body=body):
                with self.assertRaises(common.Stop) as cm:
                    facts.describe(path)
                self.assertEqual(cm.exception.status, 2)
                self.assertIn(path + " --describe: " + said, cm.exception.message)
                self.assertNotIn("\n", cm.exception.message)


class BadInput(PairsCase):
    def refused(self, lines, message):
        path = self.profile(*lines)
        find = gdrbtest.described_bins(os.path.join(self.work, "bin"), ("gdrb_write_pairs", "gdrb_mpi_pairs"))
        with self.assertRaises(common.Stop) as cm:
            profile.load(path, find)
        self.assertEqual(cm.exception.status, 2)
        self.assertEqual(cm.exception.message, "%s:%s" % (path, message))

    def test_bad_profile_lines_name_file_and_line(self):
        cases = [
            ("pairs", "2: pairs needs a metric first, bw or lat, e.g. 'pairs bw below=80%median size=8M'"),
            ("pairs bw below=80", "2: pairs bw: below= expects PERCENT%median, PERCENT%best or FACTORxmedian, "
                                  "FACTORxbest, e.g. 80%median, got '80'"),
            ("pairs bw above=2xbest", "2: pairs bw: a bandwidth pair is bad when it is below the fabric: use "
                                      "below=, not above="),
            ("pairs bw below=120%median", "2: pairs bw: below=120%median flags pairs faster than the median; "
                                          "expected at most 100%"),
            ("pairs lat above=0.5xbest", "2: pairs lat: above=0.5xbest flags pairs faster than the best; "
                                         "expected at least 1x"),
            ("pairs bw below=80%median size=8Q", "2: pairs: size=8Q: expected a size or a list, e.g. 8M or 8,8M"),
            ("pairs bw below=80%median node=0%", "2: pairs: node= expects the share of a node's pairs that must "
                                                 "be low to name the node, 1%..100%, e.g. 75%, got '0%'"),
            ("pairs bw below=80%median colour=red", "2: pairs: expected key=value with a key of name, bench, size, "
                                                    "mem, path, node, below (bw) or above (lat), got 'colour=red'"),
            ("pairs bw below=80%median bench=write_pairs", "2: rule pairs-bw: benchmark 'write_pairs' is not run "
                                                           "by this profile; its run lines give: mpi_pairs"),
        ]
        for line, message in cases:
            with self.subTest(line=line):
                self.refused([line], message)
        self.refused(["run gdrb_write_pairs mem=host", "pairs bw below=80%median"],
                     " runs gdrb_mpi_pairs and gdrb_write_pairs: a profile runs one all-pairs benchmark "
                     "(their matrices share file names); put each in a profile of its own")
        path = self.profile("pairs bw below=80%median", "pairs bw below=90%median")
        with self.assertRaises(common.Stop) as cm:
            profile.load(path)
        self.assertIn("%s:3: rule name 'pairs-bw' already used at %s:2; give this one name=" % (path, path),
                      cm.exception.message)

    def bad_matrix(self, edit, message):
        d = self.results()
        path = os.path.join(d, "pairs-host-8388608-direct.csv")
        with open(path) as f:
            lines = f.read().splitlines()
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in edit(lines)))
        status, out, err, _ = self.accept(d, "pairs bw below=80%median")
        self.assertEqual(status, 2, out + err)
        self.assertEqual(err, "gdrb-accept: %s%s\n" % (path, message))

    def test_ragged_or_missing_rows_or_bad_cells_refused_in_one_line(self):
        self.bad_matrix(lambda ls: ls[:4] + [ls[4] + ",1.0"] + ls[5:],
                        ":5: has 10 fields, the header 9: a ragged matrix")
        self.bad_matrix(lambda ls: ls[:-1], ": 7 rows for 8 columns: not a square matrix")
        self.bad_matrix(lambda ls: ls[:1] + ls[2:],
                        ":2: row '1' where row 0 was due: rows must be the ranks 0..7 in order")
        self.bad_matrix(lambda ls: ls[:3] + [",".join(ls[3].split(",")[:2] + ["nan"] + ls[3].split(",")[3:])]
                        + ls[4:],
                        ":4: column 1: 'nan' is not a non-negative decimal number")
        self.bad_matrix(lambda ls: ["src,0,1,2,3,4,5,6,7"] + ls[1:],
                        ":1: not a pairs matrix: the first line must be 'src\\dst,0,1,...,N-1' with N >= 2 ranks")
        self.bad_matrix(lambda ls: [], ":1: not a pairs matrix: the first line must be 'src\\dst,0,1,...,N-1' with "
                                      "N >= 2 ranks")

    def test_numbers_past_a_double_or_in_other_digits_refused(self):
        """A cell of 400 digits is inf to float() (a low pair would hide behind an infinite
        median); a rank table's '\u00b2' passes str.isdigit() and fails int(); a file name's
        size past 20 digits is no size_t: each one line, exit 2, or not a matrix at all."""
        for huge in ("9" * 400, "9" * 300, "1" + "0" * 30 + ".5"):   # inf; a limit that overflows; past 30
            self.bad_matrix(lambda ls: ls[:3] + [",".join(ls[3].split(",")[:2] + [huge] + ls[3].split(",")[3:])]
                            + ls[4:], ":4: column 1: '%s' is not a finite decimal number (at most 30 digits "
                                      "each side of the point)" % (huge if len(huge) <= 40 else huge[:40] + "..."))
        self.bad_matrix(lambda ls: ls[:3] + [",".join(ls[3].split(",")[:2] + ["\uff11"] + ls[3].split(",")[3:])]
                        + ls[4:], ":4: column 1: '\uff11' is not a non-negative decimal number")
        d = self.results()
        path = os.path.join(d, pairs.RANKS_FILE)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        lines[1] = lines[1].replace(",0,", ",\u00b2,", 1)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        status, out, err, _ = self.accept(d, "pairs bw below=80%median")
        self.assertEqual(status, 2, out + err)
        self.assertRegex(err, r"^gdrb-accept: %s:2: expected rank 0," % re.escape(path))
        d = self.results()
        os.rename(os.path.join(d, "pairs-host-8388608-direct.csv"), os.path.join(d, "pairs-host-%s-direct.csv"
                                                                                  % ("8" * 230)))
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write(common.schema().header + "\n")
        status, out, err, v = self.accept(d, "pairs bw below=80%median")
        self.assertEqual((status, v["rules"][0]["verdict"]), (1, "NODATA"), out + err)

    def test_a_fifo_in_place_of_a_file_is_refused_never_waited_on(self):
        def timed_out(signum, frame):
            raise AssertionError("blocked opening a FIFO")
        old = signal.signal(signal.SIGALRM, timed_out)
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        self.addCleanup(signal.alarm, 0)
        d = self.results()
        # pairs.csv, read for its memory kind and notes (a simulated GPU, a test hook): not
        # known, so the matrices cannot be judged.
        os.mkfifo(os.path.join(d, pairs.PAIRS_CSV))
        signal.alarm(10)
        status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
        self.assertEqual((status, v["rules"][0]["verdict"]), (3, "INVALID"), out + err)
        self.assertRegex(v["rules"][0]["message"], r"pairs\.csv: cannot read: not a regular file \(its notes")
        os.unlink(os.path.join(d, pairs.PAIRS_CSV))
        self.verdict(d, "PASS")
        matrix = os.path.join(d, "pairs-host-8388608-direct.csv")
        for name in (matrix, os.path.join(d, pairs.RANKS_FILE)):
            os.unlink(name)
            os.mkfifo(name)
            signal.alarm(10)
            status, out, err, _ = self.accept(d, "pairs bw below=80%median")
            signal.alarm(0)
            self.assertEqual((status, err), (2, "gdrb-accept: %s: cannot read: not a regular file\n" % name))
            if name == matrix:
                os.unlink(name)
                fx.write_matrix(name, [[1.0] * 8 for _ in range(8)])

    def test_no_matrix_is_nodata_not_a_pass(self):
        d = self.results()
        os.unlink(os.path.join(d, "pairs-host-8388608-direct.csv"))
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write(common.schema().header + "\n")
        status, out, err, v = self.accept(d, "pairs bw below=80%median")
        self.assertEqual((status, v["rules"][0]["verdict"]), (1, "NODATA"), out + err)
        self.assertIn("no data: no bandwidth matrix (pairs-*.csv)", out)


class HeatMaps(PairsCase):
    def test_data_rows_send_columns_receive_empty_is_nan(self):
        d = self.results(scenario="node", slow=5)
        mats, ranks = pairs.load_dir(d)
        fig = plot.heatmap(mats[0], ranks, plot.Meta())
        rows = fig.data["data/pairs-host-8388608-direct.dat"].splitlines()[1:]
        self.assertEqual(len(rows), 8)
        self.assertEqual(rows[5].split()[5], "NaN")
        self.assertTrue(all(float(v) < 6 for k, v in enumerate(rows[5].split()) if k != 5))
        self.assertTrue(all(float(r.split()[5]) < 6 for k, r in enumerate(rows) if k != 5))
        self.assertTrue(all(float(r.split()[2]) > 11 for k, r in enumerate(rows) if k not in (2, 5)))
        self.assertIn("'n05' 5", fig.body)
        self.assertIn("8MiB bandwidth, host memory, direct path", fig.body)

    @unittest.skipUnless(HAVE_GNUPLOT, "gnuplot not installed: no heat map drawn")
    def test_heat_map_png_and_svg(self):
        d = self.results(scenario="node", slow=5)
        fx.write(d, scenario="node", slow=5, metric="lat", size=8)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["plot", d], ""), 0)
        self.assertEqual(err.getvalue(), "gdrb-plot: 2 figures (png,svg) in %s/plots\n" % d)
        for name in ("pairs-host-8388608-direct", "pairs-lat-host-8-direct"):
            self.assertTrue(plot.complete(os.path.join(d, "plots", name + ".png"), "png"))
            self.assertTrue(plot.complete(os.path.join(d, "plots", name + ".svg"), "svg"))
            self.assertTrue(os.path.isfile(os.path.join(d, "plots", "data", name + ".dat")))


class Report(PairsCase):
    def test_summary_names_the_suspects_beside_the_matrix(self):
        d = self.results(scenario="node", slow=5)
        self.accept(d, "pairs bw below=80%median size=8M")
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(cli.main(["report", d], ""), 0)
        with open(os.path.join(d, "summary.md")) as f:
            md = f.read()
        self.assertIn("| FAIL | pairs-bw-8MiB | mpi_pairs bw pairs below 80% of median (8MiB) | "
                      "pairs-host-8388608-direct: 14 of 56 pairs below", md)
        self.assertIn("## All pairs", md)
        self.assertIn("pairs-host-8388608-direct: 8 x 8, 56 pairs measured, min ", md)
        self.assertIn("- node n05 (both directions, 42% of median on 7 of 7 pairs) (rule pairs-bw-8MiB)", md)
        self.assertRegex(md, r"\n\| n00 \|  \| 1[0-9.]+ \|")       # the matrix: n00's row, its empty diagonal
        self.assertRegex(md, r"\n\| n05 \| [45]\.[0-9]+ \|")
        with open(os.path.join(d, "report.html")) as f:
            self.assertIn("<li>node n05 (both directions, 42% of median on 7 of 7 pairs) (rule pairs-bw-8MiB)</li>",
                          f.read())


class Sweep(PairsCase):
    """The sweep runs an all-pairs binary (a stand-in here, tests/tooling/py/pairs_fixtures.py) and keeps
    its pairs CSV, rank table and matrices in the results directory, each matrix named with its
    memory kind; the verdict names the slow node."""

    def sweep(self, scenario):
        bin_dir = os.path.join(self.work, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        fake = os.path.join(bin_dir, "gdrb_mpi_pairs")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'gdrb_mpi_pairs (gdrbench) 9.9.9'; exit 0; }\n" +
                    gdrbtest.describe_stub("gdrb_mpi_pairs") + "exec %s %s \"$@\"\n" % (sys.executable, os.path.join(os.path.dirname(__file__),
                                                                       "pairs_fixtures.py")))
        os.chmod(fake, 0o755)
        prof = os.path.join(self.work, "pairs-test.profile")
        with open(prof, "w") as f:
            f.write("run gdrb_mpi_pairs mem=host,pinned launch=local sizes=8,8M\n"
                    "pairs bw below=80%median size=8M\npairs lat above=2.1xbest size=8 mem=pinned\n")
        out = os.path.join(self.work, "run-" + scenario.replace(":", "-"))
        env = dict(os.environ, GDRB_FAKE_PAIRS=scenario)
        env.pop("SLURM_JOB_ID", None)
        proc = subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir", bin_dir,
                               "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True, timeout=300)
        return proc, out

    def test_files_kept_and_the_verdict_names_the_node(self):
        proc, out = self.sweep("node:5")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        files = sorted(os.listdir(out))
        for name in ("pairs.csv", "pairs-ranks.csv", "pairs-host-8388608-direct.csv", "pairs-lat-host-8-direct.csv",
                     "pairs-pinned-8388608-direct.csv", "pairs-lat-pinned-8-direct.csv", "verdict.txt"):
            self.assertIn(name, files)
        self.assertEqual(sorted(os.listdir(os.path.join(out, "logs"))),
                         ["01-mpi_pairs-host.log", "01-mpi_pairs-host.out", "02-mpi_pairs-pinned.log",
                          "02-mpi_pairs-pinned.out", "accept.log", "node-info.log", "plot.log", "report.log"])
        with open(os.path.join(out, "pairs.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], pairs.pairs_header())
        self.assertEqual(len(lines), 1 + 2 * 2 * 56)
        self.assertEqual({line.split(",")[2] for line in lines[1:]}, {"host", "pinned"})
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual(f.read(), common.schema().header + "\n")
        with open(os.path.join(out, "meta.json")) as f:
            self.assertEqual([(s["status"], s["rows"]) for s in json.load(f)["steps"]], [("ok", 112), ("ok", 112)])
        with open(os.path.join(out, "verdict.txt")) as f:
            verdict = f.read()
        self.assertIn("node n05 (both directions, 42% of median on 7 of 7 pairs)", verdict)
        self.assertIn("node n05 (both directions, 3.1x best on 7 of 7 pairs)", verdict)
        with open(os.path.join(out, "summary.md")) as f:
            self.assertIn("## All pairs", f.read())

    def test_step_rows_appended_whole_torn_and_short_rows_dropped(self):
        from gdrbtool import sweep
        out = os.path.join(self.work, "out")
        os.makedirs(out)
        header = pairs.pairs_header()
        row = "mpi_pairs,mpi,host,direct,host,bw,8,1,0,1,n00,n01,0,0,,,,,10,1.000,,ok,0,,,,t,0.1.0"
        for mem, tail in (("host", row[:40]), ("device", "")):
            step = os.path.join(out, "logs", "step-" + mem)
            os.makedirs(step)
            with open(os.path.join(step, "pairs.csv"), "w") as f:
                f.write("%s\n%s\n%s\nmpi_pairs,short\n%s" % (header, row, row, tail))
            fx.write_matrix(os.path.join(step, "pairs-8-direct.csv"), fx.matrix(4))
            self.assertEqual(sweep.keep_pairs(step, mem, out), (2, 2 if tail else 1))
            self.assertFalse(os.path.exists(step))
        with open(os.path.join(out, "pairs.csv")) as f:
            self.assertEqual(f.read(), header + "\n" + (row + "\n") * 4)
        self.assertEqual(sorted(f for f in os.listdir(out) if f.startswith("pairs-")),
                         ["pairs-device-8-direct.csv", "pairs-host-8-direct.csv"])

    def test_step_rows_that_cannot_be_appended_stay_in_the_step(self):
        """OUT/pairs.csv cannot be written (here: a directory in its place): the step's
        directory, rows and matrices, is left whole and the sweep stops in one line."""
        from gdrbtool import sweep
        out = os.path.join(self.work, "out")
        step = os.path.join(out, "logs", "01-mpi_pairs-host")
        os.makedirs(step)
        os.makedirs(os.path.join(out, "pairs.csv"))
        row = "mpi_pairs,mpi,host,direct,host,bw,8,1,0,1,n00,n01,0,0,,,,,10,1.000,,ok,0,,,,t,0.1.0"
        with open(os.path.join(step, "pairs.csv"), "w") as f:
            f.write(pairs.pairs_header() + "\n" + row + "\n")
        fx.write_matrix(os.path.join(step, "pairs-8-direct.csv"), fx.matrix(4))
        with self.assertRaises(common.Stop) as cm:
            sweep.keep_pairs(step, "host", out)
        self.assertEqual((cm.exception.status, cm.exception.message), (1, (
            "cannot append the rows of %s/pairs.csv to %s/pairs.csv: not a regular file (remove it or choose "
            "another file); they stay in %s, with its matrices" % (step, out, step))))
        self.assertEqual(sorted(os.listdir(step)), ["pairs-8-direct.csv", "pairs.csv"])
        with open(os.path.join(step, "pairs.csv")) as f:
            self.assertIn(row, f.read())

    def test_eta_counts_rounds_and_metrics(self):
        from gdrbtool import sweep_plan
        step = sweep_plan.Step(1, "/bin/true", "gdrb_mpi_pairs", "mpi_pairs", "mpi", "mpi", "host", "8,8M", "0.3", "",
                               "", "", "", "--metric bw,lat",
                               facts=facts.parse("gdrb_mpi_pairs", gdrbtest.describe_doc("gdrb_mpi_pairs").encode()))
        sweep_plan.estimate(step, 16)       # 2 sizes x 15 rounds x (bw + 2 latency phases) x 0.395 s + 2
        self.assertEqual(step.estimate, 37)
        step.args = "--rounds 3"
        sweep_plan.estimate(step, 16)
        self.assertEqual(step.estimate, 4)

    def test_healthy_fabric_passes(self):
        proc, out = self.sweep("healthy")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("PASS: 2 rules, 2 passed", proc.stdout)


def cpu_seconds():
    """CPU time of this process and of its children that have ended."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Scale(PairsCase):
    def test_2048_ranks_judged_and_drawn_in_seconds(self):
        n = 2048
        d = os.path.join(self.work, "big")
        os.makedirs(d)
        # A healthy fabric at 12 GB/s with rank 1000 at 40%: written directly (the generator's
        # per-cell noise would take longer than the analysis).
        good, bad = "12.000", "4.800"
        row = ",".join([good] * n)
        with open(os.path.join(d, "pairs-host-8388608-direct.csv"), "w") as f:
            f.write("src\\dst," + ",".join(str(i) for i in range(n)) + "\n")
            for s in range(n):
                cells = ([bad] * n if s == 1000 else row.split(","))
                if s != 1000:
                    cells[1000] = bad
                cells[s] = ""
                f.write("%d,%s\n" % (s, ",".join(cells)))
        fx.write_ranks(d, n)
        # CPU seconds, this process's and its children's: a loaded or low-priority run stretches
        # the wall time (85 s at the lowest priority beside CI's passes), not the work.
        start = cpu_seconds()
        status, out, err, _ = self.accept(d, "pairs bw below=80%median size=8M")
        took = cpu_seconds() - start
        self.assertEqual(status, 1, out + err)
        self.assertIn("node n1000 (both directions, 40% of median on 2047 of 2047 pairs)", out)
        # Seconds on an idle machine (results/pairs-analysis.md); the bound leaves room for a slow one.
        self.assertLess(took, 60, "2048 x 2048 took %.1f CPU seconds" % took)
        mats, ranks = pairs.load_dir(d)
        fig = plot.heatmap(mats[0], ranks, plot.Meta())
        rows = fig.data["data/pairs-host-8388608-direct.dat"].splitlines()[1:]
        self.assertEqual(len(rows), 256)          # 8 x 8 ranks a pixel, the lowest shown
        self.assertEqual({r.split()[125] for r in rows}, {"4.8"})
        self.assertEqual(set(rows[125].split()), {"4.8"})
        self.assertEqual({v for k, v in enumerate(rows[3].split()) if k != 125}, {"12"})
        if HAVE_GNUPLOT:
            start = cpu_seconds()
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(cli.main(["plot", d], ""), 0)
            self.assertLess(cpu_seconds() - start, 60)


class Fixtures(unittest.TestCase):
    """The fixtures write rows by column name, from the definitions the binaries use."""

    def test_rows_by_name_and_a_wrong_column_refused(self):
        s = pairs.ranks_schema()
        line = fx.row(s, rank=0, host="n00", local_rank=0, gpu="", nic="mlx5_0")
        self.assertEqual(dict(zip(s.columns, line.split(","))),
                         {"rank": "0", "host": "n00", "local_rank": "0", "gpu": "", "nic": "mlx5_0"})
        with self.assertRaises(ValueError):
            fx.row(s, rank=0, host="n00", local_rank=0, gpu="")
        with self.assertRaises(ValueError):
            fx.row(s, rank=0, host="n00", local_rank=0, gpu="", nic="mlx5_0", port=1)


if __name__ == "__main__":
    unittest.main()
