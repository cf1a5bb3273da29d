"""gdrb plot: medians per point on both paths, the staged/direct ratio, the gnuplot script,
titles from meta.json, values that are not numbers left out (named, never a 0), no gnuplot on
PATH (no plots, said), and a whole run through gnuplot where it is installed."""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import gdrbtest
import pairs_fixtures
from gdrbtool import common, pairs, plot

HAVE_GNUPLOT = shutil.which("gnuplot") is not None


def row(**values):
    """One CSV line: an aggregate, ok row of write_lat, device memory, direct, 8 B, with VALUES."""
    f = dict(benchmark="write_lat", layer="verbs", mem="device", path="direct", pair="all", size_bytes="8",
             iterations="1000", ranks="2", hosts="2", gpu="GPU-X", nic="mlx5_0:1", status="ok", errors="0")
    f.update(values)
    return ",".join(common.csv_quote(f.get(c, "")) for c in common.schema().columns)


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test_plot.")
        self.addCleanup(shutil.rmtree, self.dir)

    def results(self, rows, meta=None, name="run"):
        """A results directory with ROWS (and META as meta.json); its results.csv."""
        d = os.path.join(self.dir, name)
        os.makedirs(d)
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write(common.schema().header + "\n" + "".join(r + "\n" for r in rows))
        if meta is not None:
            with open(os.path.join(d, "meta.json"), "w") as f:
                f.write(meta if isinstance(meta, str) else json.dumps(meta))
        return os.path.join(d, "results.csv")

    def read(self, csv_path):
        """read_data on CSV_PATH: (Data, what it said on stderr)."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            data = plot.read_data(csv_path)
        return data, err.getvalue()

    def figs(self, rows, meta=None):
        data, _ = self.read(self.results(rows))
        return {f.base: f for f in plot.figures(data, meta or plot.Meta())}

    def run_main(self, argv, env=None):
        """plot.main as scripts/gdrb runs it: (exit status, stderr)."""
        with mock.patch.dict(os.environ, env or {}):
            return gdrbtest.run_tool("gdrb-plot", plot.main, argv, quiet_stdout=False)


class MedianTest(unittest.TestCase):
    def test_one_value_as_written(self):
        self.assertEqual(plot.median(["10.630"]), ("10.630", 10.63))

    def test_odd_and_even_counts(self):
        self.assertEqual(plot.median(["3.0", "1.0", "2.0"])[0], "2")
        self.assertEqual(plot.median(["4.0", "1.0", "2.5", "3.0"])[0], "2.75")
        # awk's CONVFMT (%.6g) for what the .dat file shows; the full value for the ratio.
        text, value = plot.median(["1.0000001", "1.0000002"])
        self.assertEqual(text, "1")
        self.assertAlmostEqual(value, 1.00000015)

    def test_no_value_is_nan_not_zero(self):
        self.assertEqual(plot.median([]), ("NaN", None))


class DataTest(Tmp):
    def test_medians_per_point_on_both_paths(self):
        # Three values: their median as awk writes a number (9.0 -> 9); one value: as written.
        rows = [row(lat_p50_us=v, lat_p99_us="9.0") for v in ("1.0", "3.0", "2.0")]
        rows += [row(path="staged", lat_p50_us=v, lat_p99_us=w) for v, w in (("10.0", "20"), ("12.0", "30"))]
        rows += [row(size_bytes="64", lat_p50_us="1.5", lat_p99_us="")]
        rows += [row(path="staged", size_bytes="64", lat_p50_us="", lat_p99_us="")]
        fig = self.figs(rows)["write_lat-device"]
        self.assertEqual(fig.data["data/write_lat-device.direct.dat"], "# size p50_us p99_us\n8 2 9\n64 1.5 NaN\n")
        self.assertEqual(fig.data["data/write_lat-device.staged.dat"], "# size p50_us p99_us\n8 11 25\n64 NaN NaN\n")
        # staged p50 / direct p50 where both exist: 11 / 2; none at 64 B (no staged figure).
        self.assertEqual(fig.data["data/write_lat-device.ratio.dat"], "# size staged_time/direct_time\n8 5.5\n")
        self.assertIn("latency by path", fig.index_line)

    def test_bandwidth_ratio_is_direct_over_staged_and_busbw_wins(self):
        rows = [row(benchmark="write_bw", bw_GBps="40.0"), row(benchmark="write_bw", path="staged", bw_GBps="10.0")]
        rows += [row(benchmark="mpi_allreduce", layer="mpi", bw_GBps="5.0", busbw_GBps="7.5")]
        figs = self.figs(rows)
        self.assertEqual(figs["write_bw-device"].data["data/write_bw-device.ratio.dat"],
                         "# size staged_time/direct_time\n8 4\n")
        self.assertEqual(figs["mpi_allreduce-device"].data["data/mpi_allreduce-device.direct.dat"],
                         "# size busbw_GBps\n8 7.5\n")
        self.assertIn('set ylabel "bus bandwidth (GB/s, 1 GB = 1e9 B)"', figs["mpi_allreduce-device"].body)

    def test_only_aggregate_ok_rows_sizes_in_first_seen_order(self):
        rows = [row(size_bytes="1024", lat_p50_us="4.0"), row(size_bytes="8", lat_p50_us="1.0"),
                row(size_bytes="16", pair="0-1", lat_p50_us="2.0"), row(size_bytes="32", status="failed")]
        data, err = self.read(self.results(rows))
        series = data.groups["write_lat", "device", False].paths["direct"]
        self.assertEqual(series.sizes, [1024.0, 8.0])
        self.assertEqual(err, "")

    def test_paths_ordered_direct_staged_then_by_name(self):
        rows = [row(benchmark="copy_bw", layer="local", path=p, bw_GBps="1.0")
                for p in ("h2d", "staged", "d2h", "direct")]
        body = self.figs(rows)["copy_bw-device"].body
        order = [body.index("'data/copy_bw-device.%s.dat'" % p) for p in ("direct", "staged", "d2h", "h2d")]
        self.assertEqual(order, sorted(order))

    def test_no_rows_to_plot_is_said_and_exit_0(self):
        csv_path = self.results([row(status="failed")])
        with mock.patch.object(plot, "png_terminal", return_value="png"), \
                mock.patch.object(plot.shutil, "which", return_value="/usr/bin/gnuplot"):
            rc, err = self.run_main([os.path.dirname(csv_path)])
        self.assertEqual(rc, 0)
        self.assertEqual(err, "gdrb-plot: %s: no aggregate row with status ok: nothing to plot\n" % csv_path)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(csv_path), "plots")))


class InvalidTest(Tmp):
    def test_not_a_number_is_a_gap_named_never_zero(self):
        why = "not a finite non-negative decimal number"
        for bad in ("nan", "-5", "0x10", "1e3", "inf"):
            with self.subTest(bad=bad):
                csv_path = self.results([row(lat_p50_us=bad, lat_p99_us="2.315")], name="run-" + bad)
                data, err = self.read(csv_path)
                self.assertEqual(err, "%s:2: lat_p50_us '%s' is %s: not plotted\n" % (csv_path, bad, why))
                fig = plot.figures(data, plot.Meta())[0]
                self.assertEqual(fig.data["data/write_lat-device.direct.dat"], "# size p50_us p99_us\n8 NaN 2.315\n")

    def test_a_size_that_is_not_one_leaves_the_row_out(self):
        csv_path = self.results([row(size_bytes="8x", lat_p50_us="1.0"), row(size_bytes="", lat_p50_us="1.0")])
        data, err = self.read(csv_path)
        self.assertEqual(err, "%s:2: size_bytes '8x' is not a non-negative integer: not plotted\n"
                              "%s:3: size_bytes '' is empty: not plotted\n" % (csv_path, csv_path))
        self.assertEqual(data.groups, {})

    def test_five_named_then_counted(self):
        csv_path = self.results([row(lat_p50_us="bad%d" % i) for i in range(8)])
        _, err = self.read(csv_path)
        lines = err.splitlines()
        self.assertEqual(len(lines), 6)
        self.assertEqual(lines[-1], "%s: and 3 more values not plotted" % csv_path)

    def test_bad_csv_is_exit_2_naming_file_and_line(self):
        csv_path = self.results([row(), "a,b"])
        with mock.patch.object(plot, "png_terminal", return_value="png"), \
                mock.patch.object(plot.shutil, "which", return_value="/usr/bin/gnuplot"):
            rc, err = self.run_main([csv_path])
        self.assertEqual(rc, 2)
        self.assertIn("%s:3: has 2 fields" % csv_path, err)


class ScriptTest(Tmp):
    META = {"hosts": ["a01", "a02"], "nodes": [
        {"hostname": "gpu-a01", "gpus": [{"name": "H100"}, {"name": "H100"}],
         "nics": [{"name": "mlx5_1", "ports": [{"port": 1, "state": "1: DOWN", "rate_gbps": None}]},
                  {"name": "mlx5_0", "ports": [{"port": 1, "state": "4: ACTIVE", "rate_gbps": 400}]}]},
        {"hostname": "gpu-a02"}]}

    def meta(self, doc):
        path = os.path.join(self.dir, "meta.json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return plot.load_meta(path)

    def test_meta_names_hosts_gpu_and_active_port(self):
        m = self.meta(self.META)
        self.assertEqual((m.hosts, m.gpu, m.nic), ("gpu-a01, gpu-a02", "H100 x2", "mlx5_0:1 400 Gb/s"))
        self.assertEqual(m.port_rate, {"mlx5_0:1": "400"})

    def test_meta_many_hosts_hosts_only_and_not_json(self):
        many = {"nodes": [{"hostname": "h%d" % i} for i in range(6)]}
        self.assertEqual(self.meta(many).hosts, "h0, h1, h2, ... (6 hosts)")
        self.assertEqual(self.meta({"hosts": ["a", "b"]}).hosts, "a, b")
        self.assertEqual(self.meta('{"nodes": [,]').hosts, "")

    def test_titles(self):
        m = self.meta(self.META)
        rows = [row(benchmark="write_bw", bw_GBps="1.0"),
                row(benchmark="write_bw", mem="host", gpu="", nic="", bw_GBps="1.0"),
                row(benchmark="copy_bw", layer="local", hosts="1", ranks="1", gpu="", nic="", bw_GBps="1.0")]
        idx = {f.base: f.index_line for f in plot.figures(self.read(self.results(rows))[0], m)}
        self.assertEqual(idx["write_bw-device"], "write_bw-device\twrite_bw\tdevice\t"
                         "write_bw, device memory: bandwidth "
                         "(hosts gpu-a01, gpu-a02; 2 ranks; GPU GPU-X; NIC mlx5_0:1 400 Gb/s)\n")
        self.assertIn("GPU none used; NIC mlx5_0:1 400 Gb/s)", idx["write_bw-host"])
        self.assertIn("(host gpu-a01; one process; GPU H100 x2; NIC none used (local copies))", idx["copy_bw-device"])

    def test_xtics_label_binary_units(self):
        self.assertEqual(plot.xtics(8, 64), "set xtics ('8B' 8 0, '16B' 16 0, '32B' 32 0, '64B' 64 0)")
        tics = plot.xtics(8, 1 << 30)
        for label in ("'8B' 8 0", '"" 16 1', "'1KiB' 1024 0", "'1MiB' 1048576 0", "'1GiB' 1073741824 0"):
            self.assertIn(label, tics)

    def test_gp_script(self):
        rows = [row(lat_p50_us="1.0", lat_p99_us="2.0"), row(path="staged", lat_p50_us="3.0", lat_p99_us="4.0"),
                row(size_bytes="4096", lat_p50_us="1.5", lat_p99_us="2.5")]
        figs = plot.figures(self.read(self.results(rows))[0], self.meta(self.META))
        gp = plot.gp_script(figs, "png,svg", "pngcairo")
        self.assertTrue(gp.startswith('set terminal pngcairo size 1000,760 font "sans,10" noenhanced\n'
                                      "set output 'write_lat-device.png'\nreset\n"))
        self.assertIn('set terminal svg size 1000,760 dynamic font "sans,10" noenhanced\n'
                      "set output 'write_lat-device.svg'\n", gp)
        self.assertEqual(gp.count("set output\n"), 2)
        self.assertTrue(gp.endswith("unset multiplot\nset output\n"))
        self.assertIn("set title 'write_lat, device memory: latency by path' . \"\\n\" . 'hosts gpu-a01, gpu-a02; "
                      "2 ranks; GPU GPU-X; NIC mlx5_0:1 400 Gb/s' noenhanced\n", gp)
        self.assertIn("set xrange [6:5325]\nset multiplot\nset size 1,0.7\nset origin 0,0.3\n", gp)
        self.assertIn("plot 'data/write_lat-device.direct.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.6 "
                      "lc rgb '#1f77b4' title 'direct p50', 'data/write_lat-device.direct.dat' "
                      "using 1:3 with lines lw 1.5 dt 2 lc rgb '#1f77b4' title 'direct p99', ", gp)
        self.assertIn("set title 'staged p50 / direct p50: above 1, the direct path is faster' font \",9\"\n", gp)
        self.assertIn("plot 'data/write_lat-device.ratio.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.5 "
                      "lc rgb '#333333', 1 with lines lc rgb '#999999' dt 3\n", gp)
        self.assertEqual(plot.gp_script(figs, "svg", "png").count("set terminal"), 1)
        self.assertIn("set terminal png size 1000,760 noenhanced\n", plot.gp_script(figs, "png", "png"))

    def test_gp_strings_escaped(self):
        # Single quotes: nothing inside is expanded; '' is a quote; control characters are spaces.
        self.assertEqual(plot.gp_str('a"b\\c\nd\'e`f`@g\r\x01h'), "'a\"b\\c d''e`f`@g  h'")
        self.assertEqual(plot.gp_lines("one `x`\ntwo's"), "'one `x`' . \"\\n\" . 'two''s'")


class OptionsTest(Tmp):
    def test_usage_errors(self):
        for argv, message in ((["--format", "jpg", "x"], "--format: expected png, svg or png,svg, got 'jpg'"),
                              (["--out"], "--out: expected a directory"),
                              (["--bogus", "x"], "unknown option '--bogus'; see --help"),
                              (["a", "b"], "expected one RESULTS_DIR"),
                              ([os.path.join(self.dir, "no-such")], "no-such: no such results directory")):
            with self.subTest(argv=argv):
                rc, err = self.run_main(argv)
                self.assertEqual(rc, 2)
                self.assertTrue(err.startswith("gdrb-plot: ") and message in err, err)

    def test_help_is_the_docstring(self):
        out = subprocess.run([str(gdrbtest.GDRB), "plot", "--help"],
                             stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(out.returncode, 0)
        self.assertTrue(out.stdout.startswith("Plot a results directory with gnuplot"))
        self.assertIn("  --format LIST    png, svg or png,svg (default png,svg)\n", out.stdout)


class NoGnuplotTest(Tmp):
    def test_no_gnuplot_on_path_no_plots_said(self):
        run = os.path.dirname(self.results([row(lat_p50_us="1.0")]))
        empty = os.path.join(self.dir, "bin")
        os.mkdir(empty)
        out = subprocess.run([sys.executable, str(gdrbtest.GDRB), "plot", run], env=dict(os.environ, PATH=empty),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(out.returncode, 1)
        self.assertEqual(out.stderr, "gdrb-plot: " + plot.GNUPLOT_MISSING + "\n")
        self.assertEqual(out.stdout, "")
        self.assertFalse(os.path.exists(os.path.join(run, "plots")))


@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot not installed")
class GnuplotTest(Tmp):
    def test_fixture_run_whole(self):
        run = os.path.join(self.dir, "bad-run")
        shutil.copytree(str(gdrbtest.DATA / "bad-run"), run)
        rc, err = self.run_main(["--format", "png,svg", run])
        self.assertEqual(rc, 0, err)
        self.assertTrue(err.endswith("gdrb-plot: 11 figures (png,svg) in %s/plots\n" % run), err)
        with open(os.path.join(run, "plots", "index.tsv")) as f:
            bases = [line.split("\t")[0] for line in f]
        self.assertEqual(len(bases), 11)
        for base in bases:
            self.assertTrue(plot.complete(os.path.join(run, "plots", base + ".png"), "png"), base)
            self.assertTrue(plot.complete(os.path.join(run, "plots", base + ".svg"), "svg"), base)
        self.assertFalse(plot.complete(os.path.join(run, "plots", "index.tsv"), "png"))
        with open(os.path.join(run, "plots", "data", "write_lat-device.ratio.dat")) as f:
            self.assertEqual(f.readlines()[1].split()[0], "8")
        self.assertEqual([n for n in os.listdir(os.path.join(run, "plots")) if n.endswith(".tmp")], [])

    def test_stale_data_files_go(self):
        run = os.path.dirname(self.results([row(lat_p50_us="1.0")]))
        os.makedirs(os.path.join(run, "plots", "data"))
        stale = os.path.join(run, "plots", "data", "gone-host.direct.dat")
        open(stale, "w").close()
        rc, err = self.run_main(["--format", "svg", run])
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.exists(stale))
        self.assertEqual(sorted(os.listdir(os.path.join(run, "plots"))),
                         ["data", "gnuplot.log", "index.tsv", "plots.gp", "write_lat-device.svg"])

    def test_names_from_the_data_stay_in_plots(self):
        names = ["../../../escape", "/abs/path", ".hidden", "-dash", "x" * 300, "a\x01b", "sub/dir", "é"]
        rows = [row(benchmark=n, mem="device", path="../p", lat_p50_us="1.0", lat_p99_us="2.0", bw_GBps="1.0")
                for n in names]
        rows += [row(benchmark="write_bw", mem=m, bw_GBps="1.0") for m in ("../up", "..", "")]
        run = os.path.dirname(self.results(rows))
        rc, err = self.run_main(["--format", "svg", run])
        self.assertEqual(rc, 0, err)
        found = []
        for top, dirs, files in os.walk(self.dir):
            found += [os.path.relpath(os.path.join(top, f), run) for f in files]
        outside = [f for f in found if not f.startswith("plots/") and f != "results.csv"]
        self.assertEqual(outside, [])
        svgs = [f for f in os.listdir(os.path.join(run, "plots")) if f.endswith(".svg")]
        self.assertEqual(len(svgs), len(names) + 3)
        for f in svgs + os.listdir(os.path.join(run, "plots", "data")):
            self.assertRegex(f, r"^[A-Za-z0-9_+][A-Za-z0-9._+~-]*$")
            self.assertLessEqual(len(f), 120)

    def test_links_in_the_output_directory_never_followed(self):
        outside = os.path.join(self.dir, "outside")
        os.mkdir(outside)
        victim = os.path.join(outside, "victim")
        with open(victim, "w") as f:
            f.write("precious")
        run = os.path.dirname(self.results([row(lat_p50_us="1.0")]))
        # A link at a figure (and at NAME.tmp beside it): refused, what it points to untouched.
        os.makedirs(os.path.join(run, "plots", "data"))
        for name in ("write_lat-device.svg", "write_lat-device.svg.tmp"):
            os.symlink(victim, os.path.join(run, "plots", name))
        rc, err = self.run_main(["--format", "svg", run])
        self.assertEqual(rc, 1)
        self.assertEqual(err, "%s/plots/write_lat-device.svg: cannot write: a symbolic link (never followed; "
                              "remove it or choose another file)\n" % run)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious")
        self.assertEqual(os.listdir(outside), ["victim"])
        # plots/ or plots/data/ a link to another directory: refused, nothing written there.
        for link in ("plots", "plots/data"):
            shutil.rmtree(os.path.join(run, "plots"), ignore_errors=True)
            if link == "plots/data":
                os.mkdir(os.path.join(run, "plots"))
            os.symlink(outside, os.path.join(run, link))
            rc, err = self.run_main(["--format", "svg", run])
            self.assertEqual(rc, 1)
            self.assertEqual(err, "gdrb-plot: cannot create %s/%s: a symbolic link (never followed; give a "
                                  "directory)\n" % (run, link))
            self.assertEqual(os.listdir(outside), ["victim"])
            os.unlink(os.path.join(run, link))
        rc, err = self.run_main(["--format", "svg", "--out", os.path.join(run, "plots"), run])
        self.assertEqual(rc, 0, err)


def payloads(where):
    """Text that runs `touch $GDRB_MARK.WHERE...` if it reaches gnuplot as code: a backquoted
    command (expanded inside double quotes), and system() behind a closing double or single
    quote (no comma: the rank table cannot hold one)."""
    return ["x`touch $GDRB_MARK.%s-bq`" % where,
            'x"; system("touch $GDRB_MARK.%s-dq"); "' % where,
            "x'; system('touch $GDRB_MARK.%s-sq'); '" % where]


@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot not installed")
class InjectionTest(Tmp):
    """Every text gdrb-plot takes from a results directory reaches gnuplot as a string, never
    as code: meta.json's host, GPU and NIC names, the CSV's benchmark, mem, path, gpu, nic,
    hosts, ranks and layer, and the rank table's host names, through the real gdrb-plot."""

    def run_plot(self, run):
        mark = os.path.join(self.dir, "MARK")
        out = subprocess.run([sys.executable, str(gdrbtest.GDRB), "plot", "--format", "svg", run],
                             env=dict(os.environ, GDRB_MARK=mark), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        ran = sorted(n for n in os.listdir(self.dir) if n.startswith("MARK"))
        self.assertEqual(ran, [], "gnuplot ran commands from the data: %s\n%s" % (ran, out.stderr))
        return out

    def test_csv_meta_and_rank_table_never_code(self):
        meta = {"hosts": payloads("meta-hosts"), "nodes": [
            {"hostname": h, "gpus": [{"name": g}], "nics": [{"name": n, "ports": [
                {"port": 1, "state": "4: ACTIVE", "rate_gbps": 200}]}]}
            for h, g, n in zip(payloads("hostname"), payloads("gpu"), payloads("nic"))]}
        rows = []
        for i, (bench, mem, path) in enumerate(zip(payloads("bench"), payloads("mem"), payloads("path"))):
            for b, m, p in ((bench + "_bw", "device", "direct"), ("write_bw", mem, "staged"),
                            ("write_lat", "device", path)):
                rows.append(row(benchmark=b, mem=m, path=p, gpu=payloads("csv-gpu")[i], bw_GBps="1.0",
                                lat_p50_us="1.0", lat_p99_us="2.0", nic=payloads("csv-nic")[i]))
                rows.append(row(benchmark=b, mem=m, path="direct", size_bytes="64", bw_GBps="2.0",
                                lat_p50_us="1.0", lat_p99_us="2.0"))
        run = os.path.dirname(self.results(rows, meta=meta))
        pairs_fixtures.write(run, n=4)
        s = pairs.ranks_schema()
        with open(os.path.join(run, pairs.RANKS_FILE), "w") as f:
            f.write(s.header + "\n" + "".join(
                pairs_fixtures.row(s, rank=r, host=(payloads("rank") + ["n3"])[r], local_rank=0, gpu="", nic="")
                + "\n" for r in range(4)))
        out = self.run_plot(run)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(os.path.join(run, "plots", "index.tsv")) as f:
            self.assertEqual(len(f.readlines()), 3 + 3 + 1 + 1)

    def test_csv_hosts_ranks_and_layer_without_meta(self):
        rows = [row(benchmark="write_bw", hosts=h, ranks=r, layer=l, bw_GBps="1.0")
                for h, r, l in zip(payloads("csv-hosts"), payloads("csv-ranks"), payloads("csv-layer"))]
        out = self.run_plot(os.path.dirname(self.results(rows)))
        self.assertEqual(out.returncode, 0, out.stderr)


if __name__ == "__main__":
    unittest.main()
