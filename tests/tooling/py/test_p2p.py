"""GPU to GPU in gdrb report and gdrb plot (gdrbtool/p2p.py), on a real run of gdrb_copy_bw
--p2p=both on the simulated GPU's nvlink4 node (tests/support/data/p2p-simulated: its results.csv
and the binary's stdout): the report's matrices at the largest size are the binary's own, cell
for cell, the direct/staged ratio too, the pairs without peer access n/a with CUDA's answer;
hostile text from the CSV stays text; a value that is not a number is shown as invalid, never a
0; the heat maps' data and script; the whole run through gnuplot where it is installed."""
import base64
import contextlib
import io
import os
import re
import shutil
import tempfile
import unittest

import gdrbtest
from gdrbtool import common, p2p, plot, report

HAVE_GNUPLOT = shutil.which("gnuplot") is not None
FIXTURE = gdrbtest.DATA / "p2p-simulated"
PATHS = ["p2p-direct", "p2p-staged", "p2p-direct-bidir", "p2p-staged-bidir"]


def binary_matrices(size):
    """The matrices gdrb_copy_bw printed at SIZE ("1MiB"): title -> {(from, to): cell}."""
    out, title, names = {}, None, []
    with open(str(FIXTURE / "gdrb_copy_bw.out"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# %s(.*)$" % re.escape(size), line)
            if m:
                title, names = m.group(1), []
                out[title] = {}
                continue
            words = line.split()
            if title is None or not words or words[0] != "#":
                title = None
                continue
            if not names:
                names = words[1:]
            elif words[1].startswith("gpu"):
                out[title].update(((words[1], n), v) for n, v in zip(names, words[2:]))
    return out


def md_matrix(md, title):
    """The Markdown table under '### TITLE': {(from, to): cell}."""
    lines = md[md.index("### %s\n" % title):].split("\n")[2:]
    names = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    cells = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        row = [c.strip() for c in line.strip("|").split("|")]
        cells.update(((row[0], n), v) for n, v in zip(names, row[1:]))
    return cells


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gdrb-p2p-test.")
        self.addCleanup(shutil.rmtree, self.tmp)

    def fixture(self):
        d = os.path.join(self.tmp, "p2p-simulated")
        shutil.copytree(str(FIXTURE), d)
        return d

    def rows(self):
        """The fixture's data rows, each a dict of its columns."""
        with open(str(FIXTURE / "results.csv"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        cols = common.schema().columns
        return [dict(zip(cols, common.csv_split(line))) for line in lines[1:]]

    def write(self, rows):
        """A results directory of ROWS (dicts of columns); its path."""
        d = os.path.join(self.tmp, "run")
        os.makedirs(d, exist_ok=True)
        cols = common.schema().columns
        with open(os.path.join(d, "results.csv"), "w", encoding="utf-8") as f:
            f.write(common.schema().header + "\n")
            for r in rows:
                f.write(",".join(common.csv_quote(r.get(c, "")) for c in cols) + "\n")
        return d

    def run_report(self, d):
        return gdrbtest.run_tool("gdrb-report", report.main, [d])

    def report(self, d):
        status, err = self.run_report(d)
        self.assertEqual(status, 0, err)
        return gdrbtest.report_files(d)


class P2PTest(Base):
    # --- what the CSV holds ----------------------------------------------------------

    def test_pair_names(self):
        self.assertEqual(p2p.gpu_pair("gpu0->gpu7"), (0, 7))
        self.assertEqual(p2p.gpu_pair("gpu12->gpu3"), (12, 3))
        for bad in ("all", "gpu1->gpu1", "gpu1->gpu01", "gpu1->gpu2 ", "gpu1-gpu2", "gpu->gpu1", "gpu1234->gpu1",
                    "GPU1->GPU2", "0->1", "gpu1->gpu2;x"):
            self.assertIsNone(p2p.gpu_pair(bad), bad)

    def test_fixture_read_every_pair_path_and_size(self):
        nodes = p2p.read(str(FIXTURE / "results.csv"), self.fail)
        self.assertEqual(list(nodes), [("copy_bw", "device")])
        node = nodes[("copy_bw", "device")]
        self.assertEqual(node.paths, PATHS)
        self.assertEqual(node.order(), [0, 1, 2, 3])
        self.assertEqual(sorted(node.sizes), [65536, 1048576])
        self.assertEqual(len(node.cells), 4 * 12 * 2)
        self.assertEqual(node.largest(), 1048576)
        self.assertEqual(node.twin("p2p-direct"), "p2p-staged")
        self.assertEqual(node.twin("p2p-direct-bidir"), "p2p-staged-bidir")
        self.assertIsNone(node.twin("p2p-staged"))
        self.assertIn("simulated", node.simulated)

    # --- the report --------------------------------------------------------------------

    def test_report_matrices_are_the_binarys_own(self):
        # At the largest size (1MiB), each path's matrix and each ratio is what gdrb_copy_bw
        # printed for the same run, cell for cell (it rounds to 2 decimals, the report to 4 digits).
        md, _ = self.report(self.fixture())
        printed = binary_matrices("1MiB")
        titles = {
            "p2p-direct GB/s": ": direct (peer access) GB/s, from GPU (row) to GPU (column)",
            "p2p-staged GB/s": ": staged (through pinned host memory) GB/s",
            "p2p-direct-bidir GB/s": ", both directions at once, each direction's: direct (peer access) GB/s, "
                                     "from GPU (row) to GPU (column)",
            "p2p-staged-bidir GB/s": " bidir: staged (through pinned host memory) GB/s",
            "p2p-direct / p2p-staged": ": direct / staged",
            "p2p-direct-bidir / p2p-staged-bidir": " bidir: direct / staged",
        }
        for ours, theirs in titles.items():
            got = md_matrix(md, "copy_bw, device memory, 1MiB: " + ours)
            want = printed[theirs]
            self.assertEqual(set(got), set(want), ours)
            self.assertEqual(len(want), 16, ours)
            for k, v in want.items():
                if re.fullmatch(r"[0-9.]+", v):
                    self.assertEqual("%.2f" % float(got[k]), v, "%s %s" % (ours, k))
                else:
                    self.assertEqual(got[k], v, "%s %s" % (ours, k))
        # The bridges 0-1 and 2-3 only: direct figures there, n/a elsewhere, in both the binary and the report.
        direct = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-direct GB/s")
        self.assertEqual(sorted(k for k, v in direct.items() if v not in ("-", "n/a")),
                         [("gpu0", "gpu1"), ("gpu1", "gpu0"), ("gpu2", "gpu3"), ("gpu3", "gpu2")])
        self.assertNotIn("64KiB", md)

    def test_report_says_why_and_simulated(self):
        md, html = self.report(self.fixture())
        self.assertIn("## GPU to GPU\n", md)
        self.assertIn("<h2>GPU to GPU</h2>", html)
        self.assertIn("Measured on gdrbench simulated GPU (simgpu), the test suite's simulated GPU: these matrices "
                      "prove behaviour, never speed.", md)
        self.assertIn("p2p-direct: 8 pairs could not run (n/a); the note of gpu0->gpu2: "
                      "cudaDeviceCanAccessPeer(0, 2) = 0: CUDA maps no peer path", md)
        self.assertIn("No aggregate rows in results.csv: the GPU-to-GPU matrices are above.", md)
        # The section sits before the results and the run's details.
        self.assertLess(md.index("## GPU to GPU"), md.index("## Results"))
        self.assertLess(html.index("<h2>GPU to GPU</h2>"), html.index("<h2>Results</h2>"))
        self.assertIn('<table class="num"><tr><th>from \\ to</th><th>gpu0</th>', html)

    def test_report_embeds_the_heat_maps(self):
        d = self.fixture()
        os.mkdir(os.path.join(d, "plots"))
        name = p2p.figure_name("copy_bw", "device", "p2p-staged", 1048576)
        with open(os.path.join(d, "plots", name + ".png"), "wb") as f:
            f.write(gdrbtest.png_bytes())
        md, html = self.report(d)
        self.assertIn("![p2p-staged 1MiB, device](plots/%s.png)" % name, md)
        self.assertIn('<img alt="p2p-staged 1MiB, device" src="data:image/png;base64,%s">'
                      % base64.b64encode(gdrbtest.png_bytes()).decode(), html)
        self.assertEqual(html.count("<img "), 1)

    def test_subset_and_missing_pairs(self):
        # --p2p-gpus 0,2,5: the matrices name those GPUs only; a pair with no row is an empty cell, never 0.
        rows = [r for r in self.rows() if r["path"] in ("p2p-direct", "p2p-staged")
                and r["pair"] in ("gpu0->gpu2", "gpu2->gpu0", "gpu2->gpu3")]
        for r in rows:
            r["pair"] = r["pair"].replace("gpu3", "gpu5")
        md, _ = self.report(self.write(rows))
        cells = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-staged GB/s")
        self.assertEqual(sorted({k[0] for k in cells}), ["gpu0", "gpu2", "gpu5"])
        self.assertEqual(cells[("gpu0", "gpu5")], "")
        self.assertEqual(cells[("gpu5", "gpu5")], "-")
        self.assertRegex(cells[("gpu2", "gpu5")], r"^[0-9.]+$")
        ratio = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-direct / p2p-staged")
        self.assertEqual(ratio[("gpu0", "gpu2")], "n/a")
        self.assertEqual(ratio[("gpu5", "gpu0")], "")

    def test_statuses_and_values_never_a_zero(self):
        # invalid-data INVALID, failed as it is, a bw that is not a number invalid (listed with
        # its file and line), an empty one n/a; the ratio names the status or stays empty.
        rows = [r for r in self.rows() if r["size_bytes"] == "1048576" and r["path"] in ("p2p-direct", "p2p-staged")]
        by = {(r["path"], r["pair"]): r for r in rows}
        by[("p2p-direct", "gpu0->gpu1")].update(status="invalid-data", errors="3")
        by[("p2p-direct", "gpu1->gpu0")].update(status="failed", bw_GBps="")
        by[("p2p-staged", "gpu2->gpu3")].update(bw_GBps="nan")
        by[("p2p-staged", "gpu3->gpu2")].update(bw_GBps="")
        d = self.write(rows)
        md, _ = self.report(d)
        direct = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-direct GB/s")
        staged = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-staged GB/s")
        ratio = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-direct / p2p-staged")
        self.assertEqual(direct[("gpu0", "gpu1")], "INVALID")
        self.assertEqual(direct[("gpu1", "gpu0")], "failed")
        self.assertEqual(staged[("gpu2", "gpu3")], "invalid 'nan'")
        self.assertEqual(staged[("gpu3", "gpu2")], "n/a")
        self.assertEqual(ratio[("gpu0", "gpu1")], "invalid-data")
        self.assertEqual(ratio[("gpu1", "gpu0")], "failed")
        self.assertEqual(ratio[("gpu2", "gpu3")], "")
        self.assertEqual(ratio[("gpu3", "gpu2")], "")
        line = 1 + [i for i, r in enumerate(rows, 1) if r is by[("p2p-staged", "gpu2->gpu3")]][0]
        self.assertIn("Invalid: %s/results.csv:%d: bw_GBps 'nan' is not a finite" % (d, line), gdrbtest.rendered(md))
        self.assertNotIn("| 0 |", md)

    def test_hostile_text_stays_text(self):
        rows = [r for r in self.rows() if r["size_bytes"] == "1048576" and r["path"] == "p2p-direct"]
        for r in rows:
            r.update(benchmark="<script>x</script>|*b*", mem="[m](javascript:x)", path="p2p-direct`|<i>",
                     note="<b>n</b> | [l](x)" if r["status"] != "ok" else r["note"])
        md, html = self.report(self.write(rows))
        self.assertNotIn("<script>", html)
        self.assertNotIn("<i>", html)
        self.assertNotIn("<b>n</b>", html)
        self.assertIn("&lt;script&gt;x&lt;/script&gt;|*b*, [m](javascript:x) memory, 1MiB: p2p-direct`|&lt;i&gt; GB/s",
                      html)
        self.assertNotIn("<script>", md)
        self.assertIn("### &lt;script>x&lt;/script>\\|\\*b\\*, \\[m\\](javascript:x) memory, 1MiB: "
                      "p2p-direct\\`\\|&lt;i> GB/s", md)
        self.assertIn("the note of gpu0->gpu2: &lt;b>n&lt;/b> \\| \\[l\\](x)", md)

    def test_a_bad_size_is_listed_not_read(self):
        rows = [r for r in self.rows() if r["size_bytes"] == "1048576" and r["path"] == "p2p-staged"]
        rows[0]["size_bytes"] = "1M"
        d = self.write(rows)
        md, _ = self.report(d)
        self.assertIn("Invalid: %s/results.csv:2: size_bytes '1M' is" % d, gdrbtest.rendered(md))
        cells = md_matrix(md, "copy_bw, device memory, 1MiB: p2p-staged GB/s")
        self.assertEqual(cells[("gpu0", "gpu1")], "")
        said = []
        p2p.read(os.path.join(d, "results.csv"), lambda *a: said.append(a))
        self.assertEqual([a[:3] for a in said], [(2, "size_bytes", "1M")])

    def test_a_torn_csv_is_exit_2(self):
        d = self.fixture()
        with open(os.path.join(d, "results.csv"), "a") as f:
            f.write("copy_bw,local,device,p2p-direct")
        status, err = self.run_report(d)
        self.assertEqual(status, 2)
        self.assertIn("has no line end", err)

    # --- the plot ----------------------------------------------------------------------

    def test_heat_map_data_and_script(self):
        node = p2p.read(str(FIXTURE / "results.csv"), self.fail)[("copy_bw", "device")]
        fig = plot.gpu_heatmap(node, "p2p-direct", plot.Meta(hosts="node-a"))
        self.assertEqual(fig.base, "copy_bw-device-p2p-direct-1048576-gpus")
        data = fig.data["data/copy_bw-device-p2p-direct-1048576-gpus.dat"].splitlines()
        self.assertEqual(len(data), 5)
        cells = [line.split() for line in data[1:]]
        want = {(r["pair"]): r["bw_GBps"] for r in self.rows() if r["path"] == "p2p-direct"
                and r["size_bytes"] == "1048576" and r["status"] == "ok"}
        for i in range(4):
            for j in range(4):
                self.assertEqual(cells[i][j], want.get("gpu%d->gpu%d" % (i, j), "NaN"), (i, j))
        self.assertIn("set xtics ('gpu0' 0, 'gpu1' 1, 'gpu2' 2, 'gpu3' 3)", fig.body)
        self.assertIn("'GPU to GPU: p2p-direct, 1MiB, device memory' . \"\\n\" . '4 GPUs, node-a; rows copy from, "
                      "columns copy to; min ", fig.body)
        self.assertIn("'simulated GPU: behaviour, never speed'", fig.body)

    def test_heat_map_names_from_the_data_stay_quoted(self):
        rows = [r for r in self.rows() if r["path"] == "p2p-staged"]
        for r in rows:
            r.update(benchmark="x'; system('id') #", path="../../p`id`")
        d = self.write(rows)
        node = list(p2p.read(os.path.join(d, "results.csv"), self.fail).values())[0]
        fig = plot.gpu_heatmap(node, "../../p`id`", plot.Meta())
        self.assertNotIn("/", fig.base)
        self.assertTrue(fig.base.startswith("x___system__id____-device-.._.._p_id_-1048576-gpus~"), fig.base)
        self.assertNotIn("system('id')", fig.body.replace("system(''id'')", ""))
        self.assertIn("'GPU to GPU: ../../p`id`, 1MiB, device memory'", fig.body)


@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot not installed")
class P2PPlotTest(Base):
    def test_plot_then_report(self):
        d = self.fixture()
        common.prog = "gdrb-plot"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = plot.main([d])
        self.assertEqual(status, 0, err.getvalue())
        for path in PATHS:
            name = p2p.figure_name("copy_bw", "device", path, 1048576)
            for ext in ("png", "svg"):
                self.assertTrue(os.path.isfile(os.path.join(d, "plots", "%s.%s" % (name, ext))), name)
        self.assertIn("gdrb-plot: 4 figures (png,svg) in %s/plots" % d, err.getvalue())
        _, html = self.report(d)
        self.assertEqual(html.count('<img alt="p2p-'), 4)


if __name__ == "__main__":
    unittest.main()
