"""gdrb report on the fixtures: summary.md and report.html with the verdict on top, both paths
side by side, invalid values shown as invalid and empty ones as n/a (never as 0), hostile text
escaped in the HTML, the PNG figures embedded; bad input and unwritable output."""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import gdrbtest
from gdrbtool import common, report

VERDICT = {
    "schema": "gdrbench-verdict-1", "verdict": "FAIL", "profile": "ib-ndr400", "rules_total": 8, "passed": 4,
    "failed": 3, "nodata": 1, "invalid": 0, "invalid_values": [],
    "rules": [
        {"name": "write-lat-8B", "verdict": "PASS", "benchmark": "write_lat", "column": "lat_p50_us", "op": "<=",
         "threshold": "3", "selection": "mem=device path=direct", "message": "1.627 us at 8B"},
        {"name": "write-bw-1G", "verdict": "FAIL", "benchmark": "write_bw", "column": "bw_GBps", "op": ">=",
         "threshold": "45", "selection": "mem=device", "message": "failed at 1GiB"},
    ],
}


DOCTOR_ONE = {
    "tool": "gdrb_doctor", "host": "gpu-a01", "verdict": "FAIL", "checks": [
        {"id": 5, "name": "peermem-dmabuf", "title": "nvidia_peermem module, dma-buf support", "verdict": "FAIL",
         "evidence": "neither nvidia_peermem nor dma-buf", "fix": "load nvidia_peermem", "items": []},
        {"id": 6, "name": "memlock", "title": "RLIMIT_MEMLOCK", "verdict": "WARN", "evidence": "8 MiB",
         "fix": "raise it", "items": []},
        {"id": 7, "name": "iommu", "title": "IOMMU mode", "verdict": "PASS", "evidence": "off",
         "fix": "never shown", "items": []},
    ],
}
DOCTOR_MPI = {
    "tool": "gdrb_doctor_mpi", "verdict": "FAIL", "nodes": [
        {"host": "gpu-a01", "rank": 0, "summary": "gpu-a01: PASS (2 PASS)",
         "checks": {"rdma-ports": "PASS", "peermem-dmabuf": "PASS"}},
        {"host": "gpu-a02", "rank": 1, "summary": "gpu-a02: FAIL (1 PASS, 1 FAIL) 5:peermem-dmabuf=FAIL",
         "checks": {"rdma-ports": "PASS", "peermem-dmabuf": "FAIL"}},
    ],
}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gdrb-report-test.")
        self.addCleanup(shutil.rmtree, self.tmp)

    def fixture(self, name):
        d = os.path.join(self.tmp, name)
        shutil.copytree(str(gdrbtest.DATA / name), d)
        return d

    def run_report(self, *argv):
        """gdrb report ARGV in this process, as scripts/gdrb runs it: (status, stderr)."""
        return gdrbtest.run_tool("gdrb-report", report.main, argv)

    def report(self, d):
        status, err = self.run_report(d)
        self.assertEqual(status, 0, err)
        self.assertEqual(err, "gdrb-report: %s/summary.md and %s/report.html\n" % (d, d))
        return gdrbtest.report_files(d)

    # --- the verdict, the run, the tables ------------------------------------------

    def test_verdict_on_top(self):
        d = self.fixture("bad-run")
        with open(os.path.join(d, "verdict.json"), "w") as f:
            json.dump(VERDICT, f)
        md, html = self.report(d)
        lines = md.split("\n")
        self.assertEqual(lines[0], "# gdrbench results: bad-run")
        self.assertTrue(lines[2].startswith("**Verdict: FAIL** (profile ib-ndr400): 4 of 8 rules passed, 3 failed, "
                                            "1 without data."), lines[2])
        self.assertIn("| FAIL | write-bw-1G | write_bw bw_GBps >= 45 (mem=device) | failed at 1GiB |", md)
        self.assertLess(md.index("**Verdict"), md.index("## Run"))
        self.assertRegex(html, r'<body>\n<h1>gdrbench results: bad-run</h1>\n<div class="verdict fail">Verdict: FAIL ')
        self.assertLess(html.index('class="verdict fail"'), html.index("<h2>Run</h2>"))
        self.assertIn('<tr class="fail"><td>FAIL</td><td>write-bw-1G</td>', html)

    def test_no_verdict_no_verdict_section(self):
        md, html = self.report(self.fixture("good-run"))
        self.assertNotIn("Verdict", md)
        self.assertNotIn('class="verdict', html)
        self.assertEqual(md.split("\n")[3], "## Results")

    def test_a_verdict_that_is_not_json_is_left_out(self):
        d = self.fixture("good-run")
        with open(os.path.join(d, "verdict.json"), "w") as f:
            f.write("{not json")
        md, _ = self.report(d)
        self.assertNotIn("Verdict", md)

    def test_what_an_operator_reads_first_comes_first(self):
        # The verdict, the doctor, the suspects, the GPUDirect speedup; the run's details last.
        d = self.fixture("bad-run")
        with open(os.path.join(d, "verdict.json"), "w") as f:
            json.dump(VERDICT, f)
        with open(os.path.join(d, "doctor.json"), "w") as f:
            json.dump(DOCTOR_ONE, f)
        md, html = self.report(d)
        order = [md.index(h) for h in ("**Verdict", "## Doctor", "## Results", "## Run", "## Environment")]
        self.assertEqual(order, sorted(order), md)
        order = [html.index(h) for h in ('class="verdict', "<h2>Doctor</h2>", "<h2>Results</h2>", "<h2>Run</h2>")]
        self.assertEqual(order, sorted(order))

    def test_doctor_one_node(self):
        d = self.fixture("bad-run")
        with open(os.path.join(d, "doctor.json"), "w") as f:
            json.dump(DOCTOR_ONE, f)
        md, html = self.report(d)
        self.assertIn("gdrb_doctor on gpu-a01: FAIL", md)
        # A failing check shows its evidence and its fix; a passing one no fix.
        self.assertIn("| 5: nvidia_peermem module, dma-buf support | FAIL | neither nvidia_peermem nor dma-buf "
                      "| load nvidia_peermem |", md)
        self.assertIn("| 7: IOMMU mode | PASS | off |  |", md)
        self.assertIn('<tr class="fail"><td>5: nvidia_peermem module, dma-buf support</td>', html)
        self.assertIn('<tr class="nodata"><td>6: RLIMIT_MEMLOCK</td>', html)

    def test_doctor_every_node(self):
        d = self.fixture("bad-run")
        with open(os.path.join(d, "doctor.json"), "w") as f:
            json.dump(DOCTOR_MPI, f)
        md, html = self.report(d)
        self.assertIn("gdrb_doctor_mpi on every node of the job: FAIL", md)
        self.assertIn("| node | verdict | rdma-ports | peermem-dmabuf |", md)
        self.assertIn("| gpu-a01 | PASS | PASS | PASS |", md)
        self.assertIn("| gpu-a02 | FAIL | PASS | FAIL |", md)
        self.assertIn('<tr class="fail"><td>gpu-a02</td>', html)

    def test_doctor_that_cannot_be_read_is_said(self):
        d = self.fixture("bad-run")
        with open(os.path.join(d, "doctor.json"), "w") as f:
            f.write('{"checks": [')
        md, _ = self.report(d)
        self.assertRegex(md, r"## Doctor\n\ndoctor\.json cannot be read: .+\.")
        # Hostile text from the file is escaped like any other (test_hostile_text_escaped).
        with open(os.path.join(d, "doctor.json"), "w") as f:
            json.dump({"host": "<b>x</b>", "verdict": "FAIL", "checks": [
                {"id": 1, "title": "<script>", "verdict": "FAIL", "evidence": "a|b", "fix": "*"}]}, f)
        md, html = self.report(d)
        self.assertNotIn("<script>", html)
        self.assertIn("&lt;script&gt;", html)

    def test_skipped_step_without_memory_says_none(self):
        # A skipped step with no memory kind (null in meta.json) is not "mem=null".
        d = self.fixture("bad-run")
        with open(os.path.join(d, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        meta["skipped"] = [{"binary": "gdrb_doctor", "mem": None, "reason": "not built here"},
                           {"binary": "gdrb_copy_bw", "mem": "device", "reason": "no GPU"}]
        with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        md, _ = self.report(d)
        self.assertIn("- gdrb_doctor: not built here\n", md)
        self.assertIn("- gdrb_copy_bw mem=device: no GPU\n", md)
        self.assertNotIn("null", md)

    def test_run_and_environment(self):
        md, html = self.report(self.fixture("bad-run"))
        self.assertIn("- command: scripts/gdrb-sweep --profile ib-ndr400 --hosts gpu-a01,gpu-a02\n", md)
        self.assertIn("- launcher: mpirun (mpirun (Open MPI) 4.1.6), 2 ranks, hosts gpu-a01, gpu-a02\n", md)
        self.assertIn("| gpu-a01 | Ubuntu 22.04.4 LTS, 5.15.0-105-generic | 550.54.15 | 12.4 / 12.4.131 |", md)
        # The port state loses its number: "4: ACTIVE" is ACTIVE.
        self.assertIn("mlx5_0:1 InfiniBand 400 Gb/sec (4X NDR) ACTIVE (0000:1a:00.0, 15b3:1021)", md)
        self.assertIn("<h2>Environment</h2>", html)

    def test_both_paths_side_by_side(self):
        md, html = self.report(self.fixture("bad-run"))
        self.assertIn("### write_lat, device memory\n", md)
        self.assertIn("\n| size | direct p50 us | direct p99 us | staged p50 us | staged p99 us | staged/direct p50 |\n"
                      "|---|---:|---:|---:|---:|---:|\n| 8B | 1.627 | 7.900 | 10.63 | 14.02 | 6.54x |\n", md)
        self.assertRegex(md, r"\n\| size \| direct GB/s \| staged GB/s \| direct/staged GB/s \|\n")
        self.assertIn("\n| 1GiB | failed |", md)
        self.assertIn("<table class=\"num\"><tr><th>size</th><th>direct p50 us</th><th>direct p99 us</th>"
                      "<th>staged p50 us</th><th>staged p99 us</th><th>staged/direct p50</th></tr>\n"
                      "<tr><td>8B</td><td>1.627</td><td>7.900</td><td>10.63</td><td>14.02</td><td>6.54x</td></tr>", html)

    def test_sizes_in_order_last_row_shown(self):
        d = self.fixture("nofigure-staged")
        csv = os.path.join(d, "results.csv")
        with open(csv) as f:
            lines = f.read().splitlines()
        rows = [line.split(",") for line in lines[1:]]
        col = common.schema().index
        big, again = list(rows[0]), list(rows[0])
        big[col["size_bytes"]] = "1048576"
        again[col["lat_p50_us"]] = "9.5"
        with open(csv, "w") as f:
            f.write("\n".join([lines[0]] + [",".join(r) for r in [big] + rows + [again]]) + "\n")
        md, _ = self.report(d)
        self.assertLess(md.index("| 8B |"), md.index("| 1MiB |"))
        self.assertIn("| 8B | 9.500 |", md)

    def test_interrupted_run_says_so(self):
        d = self.fixture("good-run")
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        meta.update(status="interrupted", exit_status=130, finished=None, interrupted_by="SIGTERM")
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        md, _ = self.report(d)
        self.assertIn("This run was interrupted by SIGTERM:", md.split("## Run")[0])
        self.assertIn("to (not finished) (interrupted, exit 130)", md)
        # An older sweep's meta.json names no signal; one that names something else is not repeated.
        for by in (None, "`rm -rf`"):
            if by is None:
                del meta["interrupted_by"]
            else:
                meta["interrupted_by"] = by
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f)
            md, _ = self.report(d)
            self.assertIn("This run was interrupted: the tables", md.split("## Run")[0])

    def test_without_meta_unknown(self):
        d = self.fixture("invalid-nan")
        md, _ = self.report(d)
        self.assertIn("- profile: unknown\n", md)
        self.assertIn("- launcher: unknown, unknown ranks, hosts unknown\n", md)
        self.assertNotIn("## Environment", md)

    # --- invalid and missing values ----------------------------------------------------

    def test_invalid_values_shown_as_invalid_with_file_and_line(self):
        for kind, value in (("nan", "nan"), ("hex", "0x10"), ("negative", "-5")):
            with self.subTest(kind=kind):
                d = self.fixture("invalid-" + kind)
                md, html = self.report(d)
                self.assertIn("| 8B | invalid '%s' | 2.315 | 10.63 | 14.02 | - |" % value, md)
                self.assertIn("Invalid: %s/results.csv:2: lat_p50_us '%s' is not a finite non-negative decimal number "
                              "(shown as invalid, never as a number)" % (d, value), gdrbtest.rendered(md))
                self.assertIn("<td>invalid '%s'</td>" % value, html)
                self.assertNotRegex(md, r"\| 8B \| 0 \|")

    def test_invalid_text_in_a_figure(self):
        d = self.fixture("invalid-text")
        md, _ = self.report(d)
        self.assertRegex(md, r"\| 8B \| invalid '[^']*' \|")
        self.assertIn("Invalid: %s/results.csv:2:" % d, gdrbtest.rendered(md))

    def test_invalid_size_row_left_out_and_listed(self):
        d = self.fixture("invalid-size")
        md, _ = self.report(d)
        self.assertIn("Invalid: %s/results.csv:2: size_bytes '8x' is not a non-negative integer (row not shown)" % d,
                      gdrbtest.rendered(md))
        # The direct row was the one at "8x": only the staged path is left.
        self.assertIn("| size | staged p50 us | staged p99 us |\n|---|---:|---:|\n| 8B | 10.63 | 14.02 |\n", md)

    def test_empty_value_is_na(self):
        md, html = self.report(self.fixture("nofigure-staged"))
        self.assertIn("| 8B | n/a | 2.315 | 10.63 | 14.02 | - |", md)
        self.assertIn("<td>n/a</td>", html)

    # --- hostile text and figures ------------------------------------------------------

    def test_hostile_text_escaped(self):
        d = self.fixture("good-run")
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        meta["profile"] = "<script>alert(1)</script>"
        meta["sweep_command"] = "gdrb-sweep --label 'a\"b&c'"
        meta["nodes"][0]["hostname"] = "gpu|<b>x</b>"
        meta["steps"] = [{"n": 1, "binary": "gdrb_<img src=x>", "mem": "host", "status": "failed", "exit": 1,
                          "rows": 0, "seconds": 2, "log": "logs/01.log"}]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        verdict = dict(VERDICT, verdict='FAIL"><script>x</script>', profile="p<&>")
        with open(os.path.join(d, "verdict.json"), "w") as f:
            json.dump(verdict, f)
        md, html = self.report(d)
        self.assertNotIn("<script", html)
        self.assertNotIn("<img src=x", html)
        self.assertNotIn("<b>x</b>", html)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", html)
        self.assertIn("gdrb-sweep --label 'a&quot;b&amp;c'", html)
        self.assertIn('<div class="verdict fail&quot;&gt;&lt;script&gt;x&lt;/script&gt;">', html)
        self.assertIn("(profile p&lt;&amp;&gt;)", html)
        self.assertIn('<tr class="fail"><td>1</td><td>gdrb_&lt;img src=x&gt;</td>', html)
        # A '|' in a Markdown cell is escaped, so the table keeps its columns; no raw HTML.
        self.assertIn("| gpu\\|&lt;b>x&lt;/b> | Ubuntu", md)

    def test_markdown_from_the_data_renders_inert(self):
        """Raw HTML and Markdown in every text summary.md takes from the data (host, benchmark,
        memory kind, path, note, profile, command, label, doctor file, steps, skipped reasons,
        verdict rules and messages) is shown as text: no tag, link, image, code, emphasis or
        table cell of its own."""
        hostile = "<img src=x onerror=alert(1)>[link](http://evil)![i](http://evil/i.png)`code`*em* __b__ " \
                  "~~s~~ a|b &lt; &#60; \\"
        d = self.fixture("good-run")
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        meta.update(profile=hostile, sweep_command=hostile, label=hostile, node_info_error=hostile,
                    launcher=hostile, doctor={"exit": hostile, "file": hostile},
                    skipped=[{"binary": hostile, "mem": hostile, "reason": hostile}])
        meta["nodes"][0].update(hostname=hostile, os=hostile, gpus=[{"index": 0, "name": hostile}])
        meta["steps"] = [{"n": 1, "binary": hostile, "mem": hostile, "status": hostile, "exit": 1, "rows": 0,
                          "seconds": 2, "log": hostile}]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        rule = dict(VERDICT["rules"][1], name=hostile, message=hostile, selection=hostile)
        with open(os.path.join(d, "verdict.json"), "w") as f:
            json.dump(dict(VERDICT, profile=hostile, rules=[rule],
                           invalid_values=[{"message": hostile}]), f)
        with open(os.path.join(d, "results.csv")) as f:
            header, *rows = f.read().splitlines()
        bad = common.csv_quote(hostile.replace(",", " "))
        rows.append(",".join([bad, "verbs", bad, bad] + rows[0].split(",")[4:31] + ["failed", "0", "", bad]
                             + rows[0].split(",")[35:]))
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write("\n".join([header] + rows) + "\n")
        md, html = self.report(d)
        self.assertGreater(md.count("img src=x"), 10)
        # What is left once the escapes (\X) and entities are taken out holds no markup character.
        plain = re.sub(r"&(lt|amp);", "", re.sub(r"\\.", "", md))
        # The report's own markup: the verdict in bold, the figures.
        plain = re.sub(r"^\*\*Verdict: (.*)\*\* \(", r"\1 (", plain, flags=re.M)
        plain = re.sub(r"^!\[[^][]*\]\(plots/[A-Za-z0-9._+~-]+\.png\)$", "", plain, flags=re.M)
        for ch in "<`[]*|~":
            lines = [line for line in plain.splitlines() if ch in line and not (ch == "|" and line.startswith("|"))]
            self.assertEqual(lines, [], ch)
        self.assertNotIn("__", plain)
        # Every table row keeps its columns: a '|' from the data never ends a cell.
        for block in re.findall(r"((?:^\|.*\n)+)", md, re.M):
            counts = {len(re.findall(r"(?<!\\)\|", line)) for line in block.splitlines()}
            self.assertEqual(len(counts), 1, block)
        self.assertNotIn("<img src=x", html)

    def test_png_embedded_when_present(self):
        d = self.fixture("bad-run")
        os.mkdir(os.path.join(d, "plots"))
        png = gdrbtest.png_bytes()
        with open(os.path.join(d, "plots", "write_lat-device.png"), "wb") as f:
            f.write(png)
        md, html = self.report(d)
        self.assertIn("### write_lat, device memory\n\n![write_lat, device memory](plots/write_lat-device.png)\n", md)
        found = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([^"]*)">', html)
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0][0], "write_lat, device memory")
        self.assertEqual(base64.b64decode(found[0][1]), png)
        self.assertNotRegex(html, r'(src|href)="(https?:|/)')
        self.assertEqual(md.count("]("), 1)

    def test_no_figures_no_images(self):
        md, html = self.report(self.fixture("bad-run"))
        self.assertNotIn("<img", html)
        self.assertNotIn("](plots/", md)

    # --- bad input and output ----------------------------------------------------------

    def test_bad_usage(self):
        for argv, message in (((), "expected one RESULTS_DIR"), (("-x",), "unknown option '-x'; see --help"),
                              (("a", "b"), "expected one RESULTS_DIR"),
                              ((os.path.join(self.tmp, "none"),), "none: no such results directory")):
            with self.subTest(argv=argv):
                status, err = self.run_report(*argv)
                self.assertEqual(status, 2)
                self.assertIn(message, err)
                self.assertEqual(err.count("\n"), 1)

    def test_a_file_is_not_a_results_directory(self):
        d = self.fixture("good-run")
        status, err = self.run_report(os.path.join(d, "results.csv"))
        self.assertEqual(status, 2)
        self.assertIn("expected a results directory, not a file", err)

    def test_malformed_rows_refused(self):
        d = self.fixture("malformed-row")
        status, err = self.run_report(d)
        self.assertEqual(status, 2)
        self.assertIn("malformed-row/results.csv:4: has 40 fields", err)
        self.assertEqual(sorted(os.listdir(d)), ["results.csv"])

    def test_meta_that_is_not_json_refused(self):
        d = self.fixture("good-run")
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write('{"nodes": [1, }')
        status, err = self.run_report(d)
        self.assertEqual(status, 2)
        self.assertRegex(err, r"^gdrb-report: %s/meta.json: not JSON: .* at character 15\n$" % re.escape(d))
        self.assertFalse(os.path.exists(os.path.join(d, "summary.md")))

    def test_cannot_write_leaves_nothing(self):
        d = self.fixture("good-run")
        # summary.md can be written, report.html cannot (a directory is there): neither appears.
        os.mkdir(os.path.join(d, "report.html"))
        status, err = self.run_report(d)
        self.assertEqual(status, 1)
        self.assertEqual(err, "%s/report.html: cannot write: not a regular file (remove it or choose another "
                              "file)\n" % d)
        self.assertEqual(sorted(os.listdir(d)), ["meta.json", "report.html", "results.csv"])

    def test_planted_links_never_followed(self):
        outside = tempfile.mkdtemp(prefix="gdrb-report-outside.")
        self.addCleanup(shutil.rmtree, outside)
        victim = os.path.join(outside, "victim")
        with open(victim, "wb") as f:
            f.write(b"secret")
        for name in ("summary.md", "report.html"):
            d = self.fixture("bad-run")
            os.symlink(victim, os.path.join(d, name))
            for tmp in ("summary.md.tmp", "report.html.tmp"):
                os.symlink(victim, os.path.join(d, tmp))
            status, err = self.run_report(d)
            self.assertEqual(status, 1)
            self.assertEqual(err, "%s/%s: cannot write: a symbolic link (never followed; remove it or choose "
                                  "another file)\n" % (d, name))
            with open(victim, "rb") as f:
                self.assertEqual(f.read(), b"secret")
            shutil.rmtree(d)
        # A figure that is a link is not embedded: what it points to never lands in report.html.
        d = self.fixture("bad-run")
        os.mkdir(os.path.join(d, "plots"))
        os.symlink(victim, os.path.join(d, "plots", "write_lat-device.png"))
        md, html = self.report(d)
        self.assertNotIn(base64.b64encode(b"secret").decode(), html)
        self.assertNotIn("<img", html)

    def test_figure_names_from_the_data_stay_in_plots(self):
        d = self.fixture("good-run")
        with open(os.path.join(d, "results.csv")) as f:
            text = f.read()
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write(text.replace("\nwrite_lat,", "\n../../write_lat,"))
        name = common.file_name("../../write_lat-device")
        self.assertTrue(name.startswith("_._.._write_lat-device~"), name)
        os.mkdir(os.path.join(d, "plots"))
        with open(os.path.join(d, "plots", name + ".png"), "wb") as f:
            f.write(gdrbtest.png_bytes())
        md, html = self.report(d)
        self.assertTrue("](plots/%s.png)" % name in md)
        self.assertFalse("](plots/../" in md)

    def test_command_and_help(self):
        d = self.fixture("good-run")
        p = subprocess.run([str(gdrbtest.GDRB), "report", d], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual((p.returncode, p.stdout), (0, ""), p.stderr)
        self.assertTrue(os.path.isfile(os.path.join(d, "report.html")))
        p = subprocess.run([sys.executable, str(gdrbtest.GDRB), "report", "--help"], stdout=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith("Write summary.md and report.html for a results directory"))
        self.assertIn("  gdrb report RESULTS_DIR\n", p.stdout)


class CellTest(unittest.TestCase):
    def test_cells_and_ratio(self):
        r = report.Report(common.Json({}), None, report.Results(), "")
        self.assertEqual(r.cell("lat_p50_us", ""), "n/a")
        self.assertEqual(r.cell("lat_p50_us", "1.6274"), "1.627")
        self.assertEqual(r.cell("bw_GBps", "0"), "0")
        self.assertEqual(r.cell("bw_GBps", "-1"), "invalid '-1'")
        self.assertIsNone(r.figure("bw_GBps", "0"))
        self.assertIsNone(r.figure("bw_GBps", "nan"))
        self.assertEqual(r.figure("bw_GBps", "2.5"), 2.5)


if __name__ == "__main__":
    unittest.main()
