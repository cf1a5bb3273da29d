"""gdrb sweep: the options and their one-line errors, the plan on a made-up host (no GPU, a GPU,
an RDMA device; stub binaries), where ranks go, a step's rows merged into results.csv (torn
rows dropped, 'failed' and 'unsupported' rows for sizes not measured), a step's counter file
gathered into results.counters.csv (never into results.csv), meta.json's layout,
Ctrl-C in the middle of a step, a whole sweep without gnuplot, the progress line redrawn on a
terminal (plain lines otherwise), and every program a sweep runs
leaving its stderr and exit status in logs/."""
import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import gdrbtest
from gdrbtool import common, facts, profile, sweep, sweep_launch, sweep_meta, sweep_plan, sweep_results

QUICK = str(gdrbtest.SCRIPTS / "profiles" / "quick.profile")


def stub(directory, name, body=""):
    """An executable NAME in DIRECTORY that says its version as the gdrbench binaries do."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n[ \"$1\" = --version ] && { echo \"%s (gdrbench) 9.9.9\"; exit 0; }\n%s%s\n"
                % (name, gdrbtest.describe_stub(name) if name.startswith("gdrb_") else "", body))
    os.chmod(path, 0o755)
    return path


class Dir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self.addCleanup(self._tmp.cleanup)


class OptionsTest(unittest.TestCase):
    def refused(self, argv, message):
        with self.assertRaises(common.Stop) as cm:
            sweep.parse_args(argv)
        self.assertEqual(cm.exception.status, 2)
        self.assertEqual(cm.exception.message, message)

    def test_each_bad_option_is_one_line_naming_it(self):
        cases = [
            (["--np", "3"], "--np: expected an even number of ranks, at least 2, got '3'"),
            (["--np", "0"], "--np: expected an even number of ranks, at least 2, got '0'"),
            (["--launcher", "ssh"], "--launcher: expected mpirun or srun, got 'ssh'"),
            (["--hosts", "a", "--hostfile", "/etc/hostname"], "--hosts and --hostfile: give one of them"),
            (["--hosts", "a b"], "--hosts: expected a comma list of host names, each optionally with :SLOTS "
                                 "(a,b or a:8,b:8), got 'a b'"),
            (["--hostfile", "/nonexistent"], "--hostfile: cannot read '/nonexistent'"),
            (["--mem", "GPU;x"], "--mem: expected a comma list of memory kinds, e.g. host,device, got 'GPU;x'"),
            (["--time-per-size", "0"], "--time-per-size: expected seconds per size, e.g. 0.3, got '0'"),
            (["--time-per-size", "1."], "--time-per-size: expected seconds per size, e.g. 0.3, got '1.'"),
            (["--label", "a b"], "--label: expected letters, digits, '.', '_' or '-', starting with a letter or "
                                 "digit, got 'a b'"),
            (["--label", "-1+1"], "--label: expected letters, digits, '.', '_' or '-', starting with a letter or "
                                  "digit, got '-1+1'"),
            (["--label", "-A1"], "--label: expected letters, digits, '.', '_' or '-', starting with a letter or "
                                 "digit, got '-A1'"),
            (["--link-rate", "0.0"], "--link-rate: expected the port rate in Gb/s, e.g. 400, got '0.0'"),
            (["--bin-dir", "/nonexistent"], "--bin-dir: '/nonexistent' is not a directory"),
            (["--sizes", "8:4:2"], "--sizes: expected MIN:MAX (doubling) or a list A,B,C with sizes like 8, "
                                   "64K, 1MiB, got '8:4:2'"),
            (["--profile"], "--profile needs a value; see --help"),
            (["--np", ""], "--np needs a value; see --help"),
            (["--fast"], "unknown option '--fast'; see --help"),
        ]
        for argv, message in cases:
            with self.subTest(argv=argv):
                self.refused(argv, message)

    def test_good_options(self):
        o = sweep.parse_args(["--np", "4", "--hosts", "a:2,b:2", "--bin-dir", "/", "--bin-dir", "/tmp",
                              "--validate", "--sizes", "8:1M", "--time-per-size", "0.1", "--dry-run"])
        self.assertEqual((o.np, o.hosts, o.bin_dirs, o.validate, o.dry_run),
                         ("4", "a:2,b:2", ["/", "/tmp"], True, True))
        self.assertTrue(sweep.parse_args(["--help", "--np", "3"]).help)   # help first, as before

    def test_help_is_the_docstring(self):
        out = subprocess.run([str(gdrbtest.GDRB), "sweep", "--help"], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
        self.assertTrue(out.startswith("Run a profile of gdrbench benchmarks"))
        self.assertIn("  --dry-run          print what would run", out)


class PlanTest(Dir):
    """The quick profile on made-up hosts; the binaries are stubs in a bin dir of their own."""

    def setUp(self):
        super().setUp()
        self.bin = os.path.join(self.tmp, "bin")
        os.mkdir(self.bin)
        for name in ("gdrb_mpi_latency", "gdrb_mpi_bw", "gdrb_mpi_bibw", "gdrb_write_bw", "gdrb_copy_bw",
                     "gdrb_doctor"):
            stub(self.bin, name)
        self.prof = profile.load(QUICK)
        # Nothing from PATH or the build tree: only the stubs count.
        patcher = mock.patch.dict(os.environ, {"PATH": self.bin})
        patcher.start()
        self.addCleanup(patcher.stop)

    def plan(self, host, argv=(), launcher="mpirun"):
        o = sweep.parse_args(["--bin-dir", self.bin] + list(argv))
        return sweep.plan(o, self.prof, QUICK, host, launcher, root=self.tmp)

    @staticmethod
    def steps(p):
        return [(s.name, s.mem) for s in p.steps]

    @staticmethod
    def skips(p):
        return {(k.binary, k.mem): k.reason for k in p.skipped}

    def test_no_gpu_no_rdma(self):
        p = self.plan(sweep.Host(gpu=False, rdma=False, sysfs="/fake", launchers=("mpirun",)))
        self.assertEqual(self.steps(p), [("gdrb_mpi_latency", "host"), ("gdrb_mpi_bw", "host"),
                                         ("gdrb_mpi_bibw", "host")])
        k = self.skips(p)
        self.assertEqual(k[("gdrb_mpi_bw", "device")], "device memory needs a GPU: nvidia-smi -L lists none here")
        self.assertEqual(k[("gdrb_write_bw", "host")], "needs an RDMA device: /fake/class/infiniband is empty here")
        self.assertEqual(k[("gdrb_copy_bw", "")], "needs a GPU: nvidia-smi -L lists none here")
        self.assertEqual(k[("gdrb_mpi_allreduce", "host")],
                         "not built here (not in %s, the build tree or on PATH)" % self.bin)
        self.assertEqual((p.profile_name, p.label, p.version, p.has_rules), ("quick", "quick", "9.9.9", False))
        self.assertEqual(p.doctor.binary, "gdrb_doctor")
        self.assertEqual([s.base for s in p.steps], ["01-mpi_latency-host", "02-mpi_bw-host", "03-mpi_bibw-host"])
        # 28 sizes x 1 path x (0.3 s x 1.15 + 0.05) + 2 s of launch
        self.assertEqual((p.steps[0].range, p.steps[0].estimate), ("8B..1GiB", 13))

    def test_gpu(self):
        p = self.plan(sweep.Host(gpu=True, rdma=False, launchers=("mpirun",)))
        self.assertIn(("gdrb_mpi_latency", "device"), self.steps(p))
        self.assertEqual(p.steps[-1].name, "gdrb_copy_bw")
        copy = p.steps[-1]
        self.assertEqual((copy.mem, copy.launch, copy.layer), ("", "local", "local"))
        cmd = sweep.step_command(copy, "X.csv", "quick", None, "2")
        self.assertEqual(cmd, [copy.bin, "-m", "8:1G", "--csv", "X.csv", "--label", "quick"])
        self.assertEqual(p.steps[1].estimate, 24)   # device: direct and staged
        self.assertNotIn(("gdrb_write_bw", "device"), self.steps(p))

    def test_gpu_and_rdma(self):
        p = self.plan(sweep.Host(gpu=True, rdma=True, launchers=("mpirun",)))
        self.assertIn(("gdrb_write_bw", "host"), self.steps(p))
        self.assertIn(("gdrb_write_bw", "device"), self.steps(p))
        self.assertEqual(self.skips(p)[("gdrb_read_bw", "device")],
                         "not built here (not in %s, the build tree or on PATH)" % self.bin)
        self.assertEqual({s.layer for s in p.steps if s.name == "gdrb_write_bw"}, {"verbs"})

    def test_no_launcher(self):
        p = self.plan(sweep.Host(gpu=True, rdma=False, launchers=()))
        self.assertEqual(self.steps(p), [("gdrb_copy_bw", "")])
        self.assertEqual(self.skips(p)[("gdrb_mpi_bw", "host")], "launcher mpirun not found on PATH")

    def test_filters_and_overrides(self):
        host = sweep.Host(gpu=True, rdma=True, launchers=("mpirun",))
        p = self.plan(host, ["--bench", "bw", "--mem", "device", "--sizes", "8,64K", "--time-per-size", "0.1",
                             "--validate", "--label", "x"])
        self.assertEqual(self.steps(p), [("gdrb_mpi_bw", "device")])
        s = p.steps[0]
        self.assertEqual((s.sizes, s.time, s.validate, s.range, p.label), ("8,64K", "0.1", "on", "8B..64KiB", "x"))
        self.assertEqual([s.name for s in self.plan(host, ["--bench", "write_bw,gdrb_mpi_latency"]).steps],
                         ["gdrb_mpi_latency", "gdrb_mpi_latency", "gdrb_write_bw", "gdrb_write_bw"])
        with self.assertRaises(common.Stop) as cm:
            self.plan(host, ["--bench", "bw,nosuch"])
        self.assertEqual(cm.exception.message, "--bench: 'nosuch' is not run by profile quick; its run lines: "
                         "mpi_latency, mpi_bw, mpi_bibw, write_lat, write_bw, read_bw, send_lat, mpi_allreduce, "
                         "copy_bw")

    def test_find_bin_order(self):
        other = os.path.join(self.tmp, "other", "mpi")
        os.makedirs(other)
        stub(other, "gdrb_mpi_bw")
        self.assertEqual(sweep.find_bin("gdrb_mpi_bw", [os.path.dirname(other), self.bin]),
                         os.path.join(other, "gdrb_mpi_bw"))
        self.assertEqual(sweep.find_bin("gdrb_mpi_bw", [self.bin]), os.path.join(self.bin, "gdrb_mpi_bw"))
        self.assertEqual(sweep.find_bin("gdrb_nosuch", [self.bin], root=self.tmp), "")


class NumbersTest(Dir):
    """Numbers in options, the environment and node-info's JSON are finite ASCII decimals:
    float() reads 400 nines as inf, int() raises ValueError past 4300 digits, and both take
    Unicode digits."""

    def test_options_refused_in_one_line(self):
        for argv, start in ((["--np", "2" * 5000], "--np: expected an even number of ranks"),
                            (["--np", "\uff12"], "--np: expected"),
                            (["--np", "2" * 25], "--np: expected"),
                            (["--time-per-size", "9" * 400], "--time-per-size: expected seconds"),
                            (["--time-per-size", "1e999"], "--time-per-size: expected seconds"),
                            (["--link-rate", "9" * 400], "--link-rate: expected the port rate"),
                            (["--link-rate", "inf"], "--link-rate: expected the port rate"),
                            (["--link-rate", "\u0664\u0660\u0660"], "--link-rate: expected the port rate"),
                            (["--sizes", "9" * 5000], "--sizes: expected MIN:MAX"),
                            (["--sizes", "8:" + "1" * 30], "--sizes: expected MIN:MAX")):
            with self.subTest(argv=argv[0] + " " + argv[1][:10]):
                with self.assertRaises(common.Stop) as cm:
                    sweep.parse_args(argv)
                self.assertEqual(cm.exception.status, 2)
                self.assertTrue(cm.exception.message.startswith(start), cm.exception.message[:100])

    def test_slurm_node_count_in_other_digits_is_no_count(self):
        with mock.patch.object(sweep.shutil, "which", lambda name: "/x/" + name if name == "srun" else None):
            for count in ("\u00b2", "\uff12", "9" * 5000):
                w = sweep.placement(sweep.parse_args([]), {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": count}, "here")
                self.assertEqual(w.command(2)[:4], ["srun", "--ntasks=2", "--distribution=block", "--nodes=1"])

    def test_rounds_of_thousands_of_digits_do_not_break_the_estimate(self):
        s = sweep_plan.Step(1, "/bin/true", "gdrb_mpi_pairs", "mpi_pairs", "mpi", "mpi", "host", "8", "", "", "",
                       "", "", "--rounds " + "9" * 5000)
        sweep_plan.estimate(s, 4)
        self.assertGreater(s.estimate, 0)

    def test_node_info_numbers_past_a_double_are_null_and_meta_stays_json(self):
        line = ('{"hostname": "a", "nics": [{"ports": [{"state": "4: ACTIVE", "rate_gbps": 1%s.5}, '
                '{"state": "4: ACTIVE", "rate_gbps": Infinity}, {"rate_gbps": NaN}]}]}' % ("0" * 400))
        deep = '{"a": ' + "[" * 100000 + "]" * 100000 + "}"
        huge = '{"a": %s}' % ("9" * 5000)
        found = sweep_meta.json_lines("\n".join([line, deep, huge, '{"b": 1}']))
        self.assertEqual([obj for _, obj in found][1:], [{"b": 1}])
        node = found[0][1]
        self.assertEqual([p["rate_gbps"] for p in node["nics"][0]["ports"]], [None, None, None])
        self.assertIsNone(sweep.link_rate_of(node))
        text = sweep.meta_text({"nodes": [node], "link_rate_gbps": sweep.link_rate_of(node), "steps": []})
        json.loads(text, parse_constant=strict_constant)
        with self.assertRaises(ValueError):
            sweep.meta_text({"x": float("inf")})      # never written as Infinity


def strict_constant(word):
    raise ValueError("not JSON: %s" % word)


class PlacementTest(Dir):
    def place(self, argv, env=None):
        return sweep.placement(sweep.parse_args(argv), env or {}, "here")

    def test_local(self):
        w = self.place([])
        self.assertEqual(w.names, ["here"])
        cmd = w.command(2)
        self.assertEqual([c for c in cmd if c != "--allow-run-as-root"], ["mpirun", "-np", "2", "--oversubscribe"])

    def test_hosts_split_ranks_across_hosts(self):
        w = self.place(["--hosts", "a,b", "--launcher-args", "--mca x y"])
        self.assertEqual(w.command(4)[-5:], ["--host", "a:2,b:2", "--mca", "x", "y"])
        self.assertEqual(self.place(["--hosts", "a:4,b:4"]).command(8)[-2:], ["--host", "a:4,b:4"])

    def test_hostfile_and_srun(self):
        hf = os.path.join(self.tmp, "hosts")
        with open(hf, "w") as f:
            f.write("nodeC slots=8\n# comment\n\n  nodeD slots=8\nnodeC\n")
        w = self.place(["--hostfile", hf, "--launcher", "srun"])
        self.assertEqual(w.names, ["nodeC", "nodeD"])
        self.assertEqual(w.command(2), ["srun", "--ntasks=2", "--distribution=block", "--nodes=2",
                                        "--nodelist=nodeC,nodeD"])
        self.assertIn("--hostfile", self.place(["--hostfile", hf]).command(2))
        with open(hf, "w") as f:
            f.write("# nothing\n")
        with self.assertRaises(common.Stop) as cm:
            self.place(["--hostfile", hf])
        self.assertEqual(cm.exception.message, "--hostfile: no host names in '%s'" % hf)

    def test_a_hostfile_that_is_not_a_regular_file_is_refused_never_waited_on(self):
        fifo = os.path.join(self.tmp, "hosts.fifo")
        os.mkfifo(fifo)
        for path in (fifo, "/dev/null", self.tmp):
            with self.subTest(path=path):
                ran = subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--hostfile", path, "--dry-run"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                     timeout=30)
                self.assertEqual((ran.returncode, ran.stderr),
                                 (2, "gdrb-sweep: --hostfile: cannot read '%s': not a regular file\n" % path))

    def test_slurm_allocation_with_an_scontrol_that_cannot_answer(self):
        # scontrol installed without a configuration (slurm-client alone) fails: the node list,
        # without ranges, is its own expansion.
        with mock.patch.object(sweep.shutil, "which", lambda name: "/x/" + name), \
                mock.patch.object(sweep_launch, "capture", lambda cmd, timeout: (1, "", "no slurm.conf")):
            w = self.place([], {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1,n2", "SLURM_JOB_NUM_NODES": "2"})
        self.assertEqual((w.launcher, w.names), ("srun", ["n1", "n2"]))
        self.assertIn("--nodelist=n1,n2", w.command(2))

    def test_slurm_allocation(self):
        with mock.patch.object(sweep.shutil, "which", lambda name: "/x/" + name if name == "srun" else None):
            w = self.place([], {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1,n2", "SLURM_JOB_NUM_NODES": "2"})
        self.assertEqual((w.launcher, w.names), ("srun", ["n1", "n2"]))
        self.assertEqual(w.command(4), ["srun", "--ntasks=4", "--distribution=block", "--nodes=2",
                                        "--nodelist=n1,n2"])
        self.assertEqual(w.info_command()[:4], ["srun", "--ntasks=2", "--ntasks-per-node=1", "--nodes=2"])
        # gdrb_doctor_mpi (the pairs profile's doctor) runs once on every node, as node-info does.
        self.assertEqual(w.per_node(["gdrb_doctor_mpi", "--json"]),
                         ["srun", "--ntasks=2", "--ntasks-per-node=1", "--nodes=2", "gdrb_doctor_mpi", "--json"])


class MergeTest(Dir):
    STAMP = "2026-01-01T00:00:00Z"

    def setUp(self):
        super().setUp()
        self.header = common.schema().header
        self.part = os.path.join(self.tmp, "part.csv")

    def row(self, size, mem="host", path="direct", status="ok"):
        return ("fake,local,%s,%s,host,,,,,all,%d,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,,,1,1,"
                ",,,,,50.0,,%s,0,ok,,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," % (mem, path, size, status))

    def step(self, mem="host", paths="", sizes="8,64K,1M", layer="local"):
        # What the binary would say of itself (--describe): its kinds' paths and reg names.
        name = {"local": "gdrb_fake", "mpi": "gdrb_mpi_fake"}[layer]
        return sweep_plan.Step(1, "/bin/true", name, "fake", layer, "local", mem, sizes, "", "", "", paths,
                               "", "", facts=facts.parse(name, gdrbtest.describe_doc(name).encode()))

    def merge(self, text, fill="failed", note="why, and more", **kw):
        with open(self.part, "w", newline="") as f:
            f.write(text)
        return sweep.merge_rows(self.part, self.step(**kw), fill, note, 1, 1, "GPU X", "0.1.0", self.STAMP)

    def test_complete_rows_kept_torn_rows_dropped_missing_sizes_failed(self):
        text = "\n".join([self.header, self.row(8), "fake,local,host,short", self.row(65536) + "\r"]) + "\n"
        text += self.row(1 << 20)   # every field, but no newline: cut short at the end
        m = self.merge(text)
        self.assertEqual(m.rows, [self.row(8), self.row(65536)])
        self.assertEqual(m.dropped, 2)
        self.assertEqual(m.filled, ["fake,local,host,direct,host,,,,,all,1048576,0,,,,,,,,,,,1,1,,,,,,,,failed,0,,"
                                    '"why, and more",2026-01-01T00:00:00Z,0.1.0,,,,,,,,,'])
        self.assertEqual(len(common.schema().columns), len(common.csv_split(m.filled[0])))

    def test_unsupported_rows_for_every_path_of_device_memory(self):
        m = self.merge(self.header + "\n", fill="unsupported", note="no GPU", mem="device", sizes="8", layer="mpi")
        self.assertEqual(m.rows, [])
        self.assertEqual(m.filled, [
            "fake,mpi,device,direct,mpi-cuda,,,,,all,8,0,,,,,,,,,,,1,1,GPU X,,,,,,,unsupported,0,,no GPU,%s,0.1.0,,,,,,,,,"
            % self.STAMP,
            "fake,mpi,device,staged,staged,,,,,all,8,0,,,,,,,,,,,1,1,GPU X,,,,,,,unsupported,0,,no GPU,%s,0.1.0,,,,,,,,,"
            % self.STAMP])

    def test_mem_path_pairs_and_interrupted(self):
        m = self.merge(self.header + "\n" + self.row(8, "pinned", "h2d") + "\n", paths="host:h2d,pinned:h2d",
                       mem="", sizes="8")
        # A path the binary does not describe (it decides its own as it runs): reg unknown.
        self.assertEqual([r.split(",")[2:5] for r in m.filled], [["host", "h2d", ""]])
        m = self.merge(self.header + "\n" + self.row(8) + "\n", fill="none")
        self.assertEqual((len(m.rows), m.filled), (1, []))

    def test_a_file_without_the_header_gives_nothing(self):
        with mock.patch.object(sweep_results, "say") as said:
            m = self.merge("benchmark,oops\n" + self.row(8) + "\n", sizes="8")
        said.assert_called_once_with("%s:1: not the schema's header; its rows are not taken" % self.part)
        self.assertEqual((m.rows, m.dropped, len(m.filled)), ([], 1, 1))
        os.unlink(self.part)
        m = sweep.merge_rows(self.part, self.step(sizes="8"), "failed", "n", 1, 1, "", "", self.STAMP)
        self.assertEqual((m.rows, m.dropped, len(m.filled)), ([], 0, 1))

    def test_an_older_binarys_rows_get_the_newer_columns_empty(self):
        """A step CSV with a version 1, 2 or 3 header (a binary older than the schema): its complete
        rows are kept with the newer columns empty, so that results.csv holds rows of this version
        only; a row of another field count (one of this version among them) is dropped."""
        s = common.schema()
        for v in (1, 2, 3):
            n = s.widths[v]
            older = [",".join(common.csv_split(self.row(size))[:n]) for size in (8, 65536)]
            m = self.merge("\n".join([",".join(s.columns[:n]), older[0], self.row(16), older[1]]) + "\n")
            with self.subTest(v=v):
                self.assertEqual(m.rows, [self.row(8), self.row(65536)])
                self.assertEqual((m.dropped, [r.split(",")[10] for r in m.filled]), (1, ["1048576"]))

    def test_text_from_the_data_is_never_a_formula(self):
        """The GPU name (nvidia-smi), the note (the binary's stderr) and the version a 'failed' row
        takes are text to a spreadsheet: one that starts with =, +, -, @, a tab or a CR gets an
        apostrophe; numbers stay numbers."""
        for text in ('=HYPERLINK("http://evil","x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tx", "\r=1"):
            with self.subTest(text=text):
                with open(self.part, "w") as f:
                    f.write(self.header + "\n")
                m = sweep.merge_rows(self.part, self.step(mem="device", sizes="8"), "failed", text, 1, 1, text, text,
                                     self.STAMP)
                for row in m.filled:
                    f = dict(zip(common.schema().columns, common.csv_split(row)))
                    for column in ("gpu", "note", "version"):
                        self.assertEqual(f[column][:1], "'", (column, row))
                        self.assertEqual(f[column][1:], text.replace("\r", " "))
                    self.assertEqual((f["size_bytes"], f["iterations"]), ("8", "0"))
        self.assertEqual(common.csv_text("a=1, -2"), '"a=1, -2"')
        self.assertEqual(common.csv_text("NVIDIA H100"), "NVIDIA H100")

    def test_append_is_whole(self):
        csv = os.path.join(self.tmp, "results.csv")
        with open(csv, "w") as f:
            f.write(self.header + "\n")
        self.assertEqual(sweep.append_atomically(csv, [self.row(8), self.row(16)]), "")
        with open(csv) as f:
            self.assertEqual(f.read().splitlines(), [self.header, self.row(8), self.row(16)])
        self.assertFalse(os.path.exists(csv + ".tmp"))
        self.assertEqual(sweep.append_atomically(os.path.join(self.tmp, "nodir", "results.csv"), ["x"]),
                         "No such file or directory")


class CountersTest(Dir):
    """A step's counter file (docs/counters.md) beside results.csv, never in it."""

    def setUp(self):
        super().setUp()
        self.header = sweep_results.counters_schema().header
        self.part = os.path.join(self.tmp, "logs", "01-fake-host.csv")
        os.mkdir(os.path.join(self.tmp, "logs"))
        self.src = os.path.join(self.tmp, "logs", "01-fake-host.counters.csv")
        self.target = os.path.join(self.tmp, "results.counters.csv")

    @staticmethod
    def row(counter, delta):
        return "2026-01-01T00:00:00Z,2026-01-01T00:00:01Z,fake,n1,0,mlx5_0,1,counters,%s,error,0,%d,%d,ok" % (
            counter, delta, delta)

    def write(self, text):
        with open(self.src, "w") as f:
            f.write(text)

    def test_the_name_beside_a_csv(self):
        self.assertEqual(self.header.split(",")[:3], ["run_start", "run_end", "benchmark"])
        for csv, counters in (("results.csv", "results.counters.csv"), ("logs/01-a.csv", "logs/01-a.counters.csv"),
                              ("/r/x", "/r/x.counters.csv"), ("d/.csv", "d/.csv.counters.csv")):
            self.assertEqual(sweep_results.counters_path(csv), counters)

    def test_rows_appended_under_one_header_the_step_file_removed(self):
        self.write("\n".join([self.header, self.row("symbol_error", 3), self.row("link_downed", 0)]) + "\n" +
                   self.row("port_rcv_errors", 1))     # torn: no newline
        self.assertEqual(sweep_results.keep_counters(self.part, self.tmp), (2, ""))
        self.assertFalse(os.path.exists(self.src))
        self.write("\n".join([self.header, self.row("symbol_error", 5)]) + "\n")
        self.assertEqual(sweep_results.keep_counters(self.part, self.tmp), (1, ""))
        with open(self.target) as f:
            self.assertEqual(f.read().splitlines(), [self.header, self.row("symbol_error", 3),
                                                     self.row("link_downed", 0), self.row("symbol_error", 5)])
        # A step that wrote none (an all-pairs binary, a failed start): nothing to do.
        self.assertEqual(sweep_results.keep_counters(self.part, self.tmp), (0, ""))

    def test_another_header_or_a_link_is_kept_where_it_is(self):
        self.write("benchmark,oops\n1,2\n")
        kept, why = sweep_results.keep_counters(self.part, self.tmp)
        self.assertEqual(kept, 0)
        self.assertIn("another header", why)
        self.assertTrue(os.path.exists(self.src))
        self.assertFalse(os.path.exists(self.target))
        os.unlink(self.src)
        elsewhere = os.path.join(self.tmp, "elsewhere.csv")
        with open(elsewhere, "w") as f:
            f.write(self.header + "\n" + self.row("symbol_error", 3) + "\n")
        os.symlink(elsewhere, self.src)
        kept, why = sweep_results.keep_counters(self.part, self.tmp)
        self.assertEqual(kept, 0)
        self.assertTrue(why.startswith(self.src + ": "), why)
        self.assertFalse(os.path.exists(self.target))


class MetaTest(unittest.TestCase):
    def test_layout_and_nulls(self):
        text = sweep.meta_text({"schema": "gdrbench-meta-1", "gdrbench_git": sweep_meta.js(""), "np": 2,
                                "hosts": ["a", "b"], "link_rate_gbps": sweep_meta.jn("400"),
                                "capabilities": {"gpu": False, "rdma": True},
                                "nodes": [{"hostname": "a", "gpus": []}], "steps": [], "skipped": []})
        self.assertEqual(text, '{\n  "schema": "gdrbench-meta-1",\n  "gdrbench_git": null,\n  "np": 2,\n'
                         '  "hosts": ["a","b"],\n  "link_rate_gbps": 400,\n'
                         '  "capabilities": {"gpu": false, "rdma": true},\n'
                         '  "nodes": [\n    {"hostname":"a","gpus":[]}\n  ],\n  "steps": [\n  ],\n'
                         '  "skipped": []\n}\n')
        json.loads(text)

    def test_link_rate_is_the_fastest_active_port(self):
        node = {"nics": [{"ports": [{"state": "4: ACTIVE", "rate_gbps": 200}, {"state": "1: DOWN", "rate_gbps": 400}]},
                         {"ports": [{"state": "4: ACTIVE", "rate_gbps": 100}]}]}
        self.assertEqual(sweep.link_rate_of(node), 200)
        self.assertIsNone(sweep.link_rate_of({"nics": []}))


class DryRunTest(Dir):
    def test_a_host_with_a_gpu_and_an_rdma_port(self):
        os.makedirs(os.path.join(self.tmp, "sys", "class", "infiniband", "mlx5_0"))
        bin_dir = os.path.join(self.tmp, "bin")
        os.mkdir(bin_dir)
        stub(bin_dir, "nvidia-smi", 'echo "GPU 0: Fake (UUID: GPU-0)"')
        for name in ("gdrb_mpi_bw", "gdrb_write_bw", "gdrb_copy_bw"):
            stub(bin_dir, name)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                   GDRB_SYSFS=os.path.join(self.tmp, "sys"))
        env.pop("SLURM_JOB_ID", None)
        out = subprocess.run([str(gdrbtest.GDRB), "sweep", "--dry-run", "--bin-dir", bin_dir, "--hosts", "a,b",
                              "--np", "4", "--bench", "bw,write_bw,copy_bw"], env=env, stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout.splitlines()
        self.assertRegex(out[0], r"^profile quick \(.*/quick.profile\): 5 steps, about \d+ (s|min); launcher mpirun, "
                                 r"4 ranks, hosts a,b$")
        self.assertRegex(out[1], r"^\[1/5\] mpirun -np 4 (--allow-run-as-root )?--host a:2,b:2 \S+/gdrb_mpi_bw "
                                 r"-m 8:1G --csv OUT/logs/01-mpi_bw-host.csv --label quick --mem host$")
        self.assertTrue(out[4].endswith("--csv OUT/logs/04-write_bw-device.csv --label quick --mem device"))
        self.assertTrue(out[5].endswith("/gdrb_copy_bw -m 8:1G --csv OUT/logs/05-copy_bw.csv --label quick"))
        self.assertRegex(out[6], r"^doctor: (/\S+/gdrb_doctor|gdrb_doctor: not built here)$")


class InterruptTest(Dir):
    """Ctrl-C in the middle of a (fake, long) step: its complete row kept, the half row dropped,
    the step stopped, meta.json says interrupted, exit 130; a scheduler's SIGTERM alike, each
    named as the signal it was."""

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm_is_named_not_called_ctrl_c(self):
        self.interrupt(signal.SIGTERM)

    def interrupt(self, sig):
        bin_dir = os.path.join(self.tmp, "bin")
        os.mkdir(bin_dir)
        header = common.schema().header
        row = ("fake_slow,local,host,direct,host,,,,,all,8,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,"
               ",,1,1,,,,,,50.0,,ok,0,ok,,2026-11-21T00:00:00Z,0.1.0,,,,,,,,,")
        stub(bin_dir, "gdrb_fake_slow", """while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done
printf '%%s\\n%%s\\n%%s' '%s' '%s' 'fake_slow,local,host,direct,host,,,,,all,65536,1' >"$csv"
echo $$ >"%s/pid"
exec sleep 60""" % (header, row, self.tmp))
        prof = os.path.join(self.tmp, "slow.profile")
        with open(prof, "w") as f:
            f.write("sizes 8,64K\nrun gdrb_fake_slow launch=local\nrun gdrb_fake_slow launch=local bench=again\n")
        out = os.path.join(self.tmp, "run")
        env = dict(os.environ)
        env.pop("SLURM_JOB_ID", None)
        # SIGINT at its default in the sweep, even where the tests were started with it ignored
        # (nohup, a background job): the sweep rightly leaves an ignored SIGINT ignored.
        proc = subprocess.Popen([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir",
                                 bin_dir, "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        # The stub writes its pid once its rows are written: a slow machine cannot signal it earlier.
        pidfile = os.path.join(self.tmp, "pid")
        deadline = time.monotonic() + 30
        while not (os.path.exists(pidfile) and os.path.getsize(pidfile)) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stderr.decode())
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual(f.read().splitlines(), [header, row])
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["status"], meta["exit_status"], meta["interrupted_by"]),
                         ("interrupted", 130, sig.name))
        self.assertEqual([(s["status"], s["rows"], s["dropped"], s["filled"]) for s in meta["steps"]],
                         [("interrupted", 1, 1, 0)])
        self.assertEqual(meta["skipped"][-1]["reason"], "not run: the sweep was interrupted by " + sig.name)
        self.assertIn(b"gdrb_fake_slow mem=host: interrupted, 1 row, 1 incomplete rows dropped", stderr)
        self.assertIn(b"interrupted by %s: %s keeps every row measured so far" % (
            sig.name.encode(), os.path.join(out, "results.csv").encode()), stderr)
        with open(os.path.join(out, "summary.md")) as f:
            self.assertIn("This run was interrupted by %s:" % sig.name, f.read())
        with open(pidfile) as f:
            pid = int(f.read())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        self.assertFalse(os.path.exists(os.path.join(out, "logs", "01-fake_slow-host.csv")))
        with open(os.path.join(out, "logs", "01-fake_slow-host.log")) as f:
            self.assertEqual(f.read().splitlines()[-1], "# exit status 143 (stopped: the sweep was interrupted by %s)" % sig.name)


def path_without(tmp, name):
    """PATH with NAME hidden: each of its directories that holds NAME is replaced by one (in
    TMP) of links to everything else in it."""
    dirs = []
    for i, d in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if d and os.path.exists(os.path.join(d, name)):
            shadow = os.path.join(tmp, "path-%d" % i)
            os.mkdir(shadow)
            for entry in os.listdir(d):
                if entry != name:
                    os.symlink(os.path.join(d, entry), os.path.join(shadow, entry))
            d = shadow
        dirs.append(d)
    return os.pathsep.join(dirs)


def fake_bench(directory, name, rows=(), stderr=(), status=0, counters=()):
    """A benchmark NAME that writes the schema's header and ROWS to its --csv file, the counter
    file's header and COUNTERS beside it (where there are any), the lines STDERR on stderr, and
    exits STATUS."""
    def lines(words):
        return " ".join("'%s'" % w for w in words)
    body = 'while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n'
    body += "printf '%%s\\n' %s >\"$csv\"\n" % lines([common.schema().header] + list(rows))
    if counters:
        body += "printf '%%s\\n' %s >\"${csv%%.csv}.counters.csv\"\n" % lines(
            [sweep_results.counters_schema().header] + list(counters))
    if stderr:
        body += "printf '%%s\\n' %s >&2\n" % lines(stderr)
    return stub(directory, name, body + "exit %d" % status)


def ok_row(bench):
    return ("%s,local,host,direct,host,,,,,all,8,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,"
            ",,1,1,,,,,,50.0,,ok,0,ok,,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," % bench)


class EndToEnd(Dir):
    """Whole sweeps of fake local benchmarks (no launcher needed), as a user runs them."""

    def setUp(self):
        super().setUp()
        self.bin = os.path.join(self.tmp, "bin")
        os.mkdir(self.bin)
        self.out = os.path.join(self.tmp, "run")

    def sweep(self, profile_text, *argv, path=None, env=None):
        prof = os.path.join(self.tmp, "test.profile")
        with open(prof, "w") as f:
            f.write(profile_text)
        env = dict(os.environ, PATH=path or os.environ["PATH"], **(env or {}))
        env.pop("SLURM_JOB_ID", None)
        return subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir", self.bin,
                               "--out", self.out] + list(argv), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)

    def read(self, name):
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            return f.read()

    def test_without_gnuplot(self):
        """No gnuplot: said once, no plots; the results, meta.json and the report are all there, exit 0."""
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        path = path_without(self.tmp, "gnuplot")
        self.assertIsNone(shutil.which("gnuplot", path=path))
        ran = self.sweep("sizes 8\nrun gdrb_fake_ok launch=local\n", path=path)
        self.assertEqual(ran.returncode, 0, ran.stderr)
        said = "gdrb-sweep: gnuplot not found: no plots (install gnuplot-nox; then gdrb plot %s)\n" % self.out
        self.assertEqual(ran.stderr.count(said), 1, ran.stderr)
        self.assertEqual(self.read("results.csv").splitlines(), [common.schema().header, ok_row("fake_ok")])
        self.assertIn("fake_ok", self.read("summary.md"))
        self.assertTrue(self.read("report.html").startswith("<!DOCTYPE html>"))
        self.assertTrue(ran.stderr.endswith("%s/summary.md, %s/report.html\n" % (self.out, self.out)), ran.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "plots")))
        self.assertNotIn("\x1b", ran.stderr)  # not a terminal: plain lines, no redrawing
        self.assertEqual(self.read("logs/plot.log"), "# " + said[len("gdrb-sweep: "):])
        meta = json.loads(self.read("meta.json"))
        self.assertEqual((meta["status"], meta["exit_status"], meta["steps"][0]["status"]), ("complete", 0, "ok"))

    def test_counter_files_beside_results_never_in_them(self):
        """Each step's counter file lands in results.counters.csv; results.csv holds the steps' rows alone."""
        counters = [CountersTest.row("symbol_error", 3), CountersTest.row("sent_pkts", 9)]
        fake_bench(self.bin, "gdrb_fake_a", [ok_row("fake_a")], counters=counters)
        fake_bench(self.bin, "gdrb_fake_b", [ok_row("fake_b")], counters=counters[:1])
        ran = self.sweep("sizes 8\nrun gdrb_fake_a launch=local\nrun gdrb_fake_b launch=local\n",
                         path=path_without(self.tmp, "gnuplot"))
        self.assertEqual(ran.returncode, 0, ran.stderr)
        self.assertEqual(self.read("results.csv").splitlines(), [common.schema().header, ok_row("fake_a"),
                                                                 ok_row("fake_b")])
        self.assertEqual(self.read("results.counters.csv").splitlines(),
                         [sweep_results.counters_schema().header] + counters + counters[:1])
        self.assertEqual([n for n in os.listdir(os.path.join(self.out, "logs")) if n.endswith(".csv")], [])
        meta = json.loads(self.read("meta.json"))
        self.assertEqual([s["counter_rows"] for s in meta["steps"]], [2, 1])

    def test_every_json_file_a_sweep_writes_is_strict_json(self):
        """A whole run (sweep, its doctor, plot, accept, report) on a host whose port rate has
        more digits than a double holds: meta.json, verdict.json and doctor.json load with a
        parser that refuses NaN and Infinity."""
        sysfs = os.path.join(self.tmp, "sys")
        port = os.path.join(sysfs, "class", "infiniband", "mlx5_0", "ports", "1")
        os.makedirs(port)
        with open(os.path.join(port, "rate"), "w") as f:
            f.write("1%s.5 Gb/sec (4X NDR)\n" % ("0" * 400))
        with open(os.path.join(port, "state"), "w") as f:
            f.write("4: ACTIVE\n")
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        stub(self.bin, "gdrb_fake_doctor", 'echo "{\\"ok\\": true}"')
        ran = self.sweep("sizes 8\ndoctor gdrb_fake_doctor\nrun gdrb_fake_ok launch=local\n"
                         "rule r fake_ok bw_GBps >= 1% of link\n", env={"GDRB_SYSFS": sysfs})
        self.assertNotIn("Traceback", ran.stderr)
        found = []
        for top, _, files in os.walk(self.out):
            for name in files:
                if name.endswith(".json"):
                    found.append(name)
                    with open(os.path.join(top, name), encoding="utf-8") as f:
                        json.loads(f.read(), parse_constant=strict_constant)
        self.assertEqual(sorted(found), ["doctor.json", "meta.json", "verdict.json"], ran.stderr)
        meta = json.loads(self.read("meta.json"))
        self.assertIsNone(meta["link_rate_gbps"])
        self.assertEqual(json.loads(self.read("verdict.json"))["rules"][0]["verdict"], "FAIL")   # no rate: no pass

    def test_a_full_disk_keeps_the_step_rows_and_stops_in_one_line(self):
        """Step 2 measures a row and then the disk is full: its rows cannot be appended to
        results.csv, so they stay in its step file, and the sweep stops there (exit 1)."""
        mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(mnt)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if mounted.returncode != 0:
            self.skipTest("cannot mount a tmpfs here: " + mounted.stdout.strip())
        self.addCleanup(subprocess.run, ["umount", mnt])
        self.out = os.path.join(mnt, "run")
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        stub(self.bin, "gdrb_fake_fill", 'while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n'
             "printf '%%s\\n' '%s' '%s' >\"$csv\"\n"
             'cat /dev/zero >"${csv%%/*}/../filler" 2>/dev/null; exit 0'
             % (common.schema().header, ok_row("fake_fill")))
        fake_bench(self.bin, "gdrb_fake_never", [ok_row("fake_never")])
        ran = self.sweep("sizes 8\nrun gdrb_fake_ok launch=local\nrun gdrb_fake_fill launch=local\n"
                         "run gdrb_fake_never launch=local\n")
        part = os.path.join(self.out, "logs", "02-fake_fill-host.csv")
        self.assertEqual(ran.returncode, 1, ran.stderr)
        self.assertNotIn("Traceback", ran.stderr)
        self.assertTrue(ran.stderr.endswith(
            "gdrb-sweep: cannot append the rows of step 2 (gdrb_fake_fill mem=host) to %s/results.csv: No space "
            "left on device; its rows stay in %s (1 measured)\n" % (self.out, part)), ran.stderr)
        with open(part) as f:
            self.assertEqual(f.read().splitlines()[1:], [ok_row("fake_fill")])
        self.assertEqual(self.read("results.csv").splitlines(), [common.schema().header, ok_row("fake_ok")])
        self.assertNotIn("fake_never", self.read("commands.txt"))

    def test_a_vanished_directory_is_one_line(self):
        """The results directory removed under a running sweep: one line saying so, exit 1."""
        stub(self.bin, "gdrb_fake_rm", 'while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n'
             'rm -rf "${csv%%/logs/*}"; exit 0')
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        ran = self.sweep("sizes 8\nrun gdrb_fake_rm launch=local\nrun gdrb_fake_ok launch=local\n")
        self.assertEqual(ran.returncode, 1, ran.stderr)
        self.assertNotIn("Traceback", ran.stderr)
        self.assertRegex(ran.stderr, r"gdrb-sweep: cannot append the rows of step 1 \(gdrb_fake_rm mem=host\) to "
                                     r".*/results.csv: No such file or directory; nothing of it is left to keep\n$")

    def test_a_reader_gone_from_stdout_costs_the_copy_not_the_sweep(self):
        """gdrb sweep | head: the tables on stdout are a copy; the sweep runs to its end."""
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        stub(self.bin, "gdrb_fake_table", 'while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n'
             "printf '%%s\\n' '%s' '%s' >\"$csv\"\nseq 1 20000"
             % (common.schema().header, ok_row("fake_table")))
        prof = os.path.join(self.tmp, "test.profile")
        with open(prof, "w") as f:
            f.write("sizes 8\nrun gdrb_fake_table launch=local\nrun gdrb_fake_ok launch=local\n")
        env = dict(os.environ, PATH=path_without(self.tmp, "gnuplot"))
        env.pop("SLURM_JOB_ID", None)
        proc = subprocess.Popen([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir",
                                 self.bin, "--out", self.out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
        self.assertEqual(proc.wait(timeout=120), 0, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(self.read("results.csv").splitlines(),
                         [common.schema().header, ok_row("fake_table"), ok_row("fake_ok")])

    def test_progress_redrawn_on_a_terminal(self):
        """stderr a terminal: the step's line is redrawn in place (carriage return, erase to the
        end of the line) with the time so far and the ETA while it runs, then its outcome."""
        stub(self.bin, "gdrb_fake_slow", 'while [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n'
             "sleep 2.5\nprintf '%%s\\n' '%s' '%s' >\"$csv\"" % (common.schema().header, ok_row("fake_slow")))
        prof = os.path.join(self.tmp, "test.profile")
        with open(prof, "w") as f:
            f.write("sizes 8\nrun gdrb_fake_slow launch=local\n")
        env = dict(os.environ)
        env.pop("SLURM_JOB_ID", None)
        master, slave = pty.openpty()
        try:
            proc = subprocess.Popen([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir",
                                     self.bin, "--out", self.out], stdout=subprocess.DEVNULL, stderr=slave, env=env)
        finally:
            os.close(slave)
        said = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the sweep (the terminal's last writer) is gone
                break
            if not chunk:
                break
            said += chunk
        os.close(master)
        self.assertEqual(proc.wait(timeout=60), 0)
        text = said.decode("utf-8", "replace")
        redraws = re.findall(r"\r\x1b\[K\[1/1\] gdrb_fake_slow mem=host 8B  \d+ s  ETA \d+ s", text)
        self.assertGreaterEqual(len(redraws), 2, repr(text))  # the first draw, then at least one tick
        self.assertRegex(text, r"\r\x1b\[K\[1/1\] gdrb_fake_slow mem=host: ok, 1 rows?, \d+ s\r?\n")

    def test_every_child_leaves_its_stderr_and_exit_status_in_logs(self):
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")], ["gdrb_fake_ok: a word on stderr"])
        fake_bench(self.bin, "gdrb_fake_fail", [], ["gdrb_fake_fail: lost the peer (injected)", "and more"], 3)
        stub(self.bin, "gdrb_fake_doctor", 'echo "{}"; echo "gdrb_fake_doctor: a check fails" >&2; exit 1')
        # The other host cannot be reached: node-info through the launcher fails (2 lines).
        stub(self.bin, "mpirun", 'echo "mpirun: cannot reach b (injected)" >&2; echo "its second line" >&2; exit 1')
        # gnuplot lists its terminals, then fails to draw.
        stub(self.bin, "gnuplot", '[ "$1" = -e ] && exit 0; echo "gnuplot: cannot draw (injected)" >&2; exit 1')
        ran = self.sweep("sizes 8\ndoctor gdrb_fake_doctor\nrun gdrb_fake_ok launch=local\n"
                         "run gdrb_fake_fail launch=local\nrule r fake_fail status = ok\n", "--hosts", "a,b",
                         path=self.bin + os.pathsep + os.environ["PATH"])
        self.assertEqual(ran.returncode, 1, ran.stderr)
        logs = sorted(os.listdir(os.path.join(self.out, "logs")))
        # The failing step, measured again twice (--repeat-failed's default), each attempt its own logs.
        self.assertEqual(logs, ["01-fake_ok-host.log", "01-fake_ok-host.out", "02-fake_fail-host.attempt2.log",
                                "02-fake_fail-host.attempt2.out", "02-fake_fail-host.attempt3.log",
                                "02-fake_fail-host.attempt3.out", "02-fake_fail-host.log", "02-fake_fail-host.out", "accept.log", "doctor.log", "node-info.log", "plot.log",
                                "report.log"])

        def log(name):
            text = self.read(os.path.join("logs", name))
            self.assertTrue(text.startswith("# "), text)
            return text.splitlines()

        self.assertEqual(log("01-fake_ok-host.log")[1:], ["gdrb_fake_ok: a word on stderr", "# exit status 0"])
        self.assertEqual(log("02-fake_fail-host.log")[1:], ["gdrb_fake_fail: lost the peer (injected)", "and more",
                                                           "# exit status 3"])
        self.assertEqual(log("doctor.log"), ["# %s/gdrb_fake_doctor --json" % self.bin,
                                             "gdrb_fake_doctor: a check fails", "# exit status 1"])
        info = log("node-info.log")
        self.assertIn("# %s/lib/node-info" % gdrbtest.SCRIPTS, info)           # this host
        self.assertIn("# mpirun --version", info)
        at = info.index(next(x for x in info if x.startswith("# mpirun -np 2 --host a,b")))
        self.assertEqual(info[at + 1:at + 4], ["mpirun: cannot reach b (injected)", "its second line",
                                               "# exit status 1"])
        plot = log("plot.log")
        self.assertEqual(plot[0], "# %s plot %s" % (gdrbtest.GDRB, self.out))
        self.assertIn("gnuplot: cannot draw (injected)", plot)
        self.assertEqual(plot[-1], "# exit status 1")
        accept = log("accept.log")
        self.assertEqual(accept[0], "# %s accept %s %s" % (gdrbtest.GDRB, self.out,
                                                                os.path.join(self.tmp, "test.profile")))
        self.assertRegex(accept[1], r"^gdrb-accept: verdict in \S+/verdict.json and \S+/verdict.xml$")
        self.assertEqual(accept[2:], ["# exit status 1"])
        report = log("report.log")
        self.assertEqual((report[0], report[-1]), ("# %s report %s" % (gdrbtest.GDRB, self.out),
                                                   "# exit status 0"))
        # The terminal still gets what it got: each stage's stderr, the node-info failure.
        for line in plot[1:-1] + accept[1:-1] + report[1:-1]:
            self.assertIn(line + "\n", ran.stderr)
        self.assertIn("gdrb-sweep: could not run node-info on every host through mpirun: mpirun: cannot reach b "
                      "(injected); meta.json describes this host only (all it said: logs/node-info.log)\n", ran.stderr)
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["node_info_error"],
                         "could not run node-info on every host through mpirun: mpirun: cannot reach b (injected)")
        self.assertEqual([(s["exit"], s["log"]) for s in meta["steps"]],
                         [(0, "logs/01-fake_ok-host.log"), (3, "logs/02-fake_fail-host.log"),
                          (3, "logs/02-fake_fail-host.attempt2.log"), (3, "logs/02-fake_fail-host.attempt3.log")])


class OutputDirTest(Dir):
    """Only regular files inside the results directory, never through a link; the directory
    claimed at once (two sweeps into one --out: one goes on); why it cannot be written."""

    def setUp(self):
        super().setUp()
        self.bin = os.path.join(self.tmp, "bin")
        os.mkdir(self.bin)
        self.outside = os.path.join(self.tmp, "outside")
        os.mkdir(self.outside)
        self.victim = os.path.join(self.outside, "victim")
        with open(self.victim, "w") as f:
            f.write("precious")
        fake_bench(self.bin, "gdrb_fake_ok", [ok_row("fake_ok")])
        stub(self.bin, "gdrb_fake_doctor", 'echo "{}"')

    def sweep(self, out):
        prof = os.path.join(self.tmp, "test.profile")
        with open(prof, "w") as f:
            f.write("sizes 8\ndoctor gdrb_fake_doctor\nrun gdrb_fake_ok launch=local\nrule r fake_ok status = ok\n")
        env = dict(os.environ)
        env.pop("SLURM_JOB_ID", None)
        return subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir", self.bin,
                               "--out", out], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)

    def assertUntouched(self):
        self.assertEqual(os.listdir(self.outside), ["victim"])
        with open(self.victim) as f:
            self.assertEqual(f.read(), "precious")

    def test_planted_links_never_followed(self):
        out = os.path.join(self.tmp, "run")
        os.makedirs(os.path.join(out, "logs"))
        names = ["meta.json", "summary.md", "report.html", "verdict.json", "verdict.xml", "verdict.txt",
                 "doctor.json", "logs/01-fake_ok-host.log", "logs/01-fake_ok-host.out", "logs/doctor.log",
                 "logs/node-info.log", "logs/plot.log", "logs/accept.log", "logs/report.log",
                 "meta.json.tmp", "summary.md.tmp", "verdict.txt.tmp"]
        for name in names:
            os.symlink(self.victim, os.path.join(out, name))
        os.symlink(self.outside, os.path.join(out, "plots"))
        ran = self.sweep(out)
        self.assertEqual(ran.returncode, 1, ran.stderr)
        self.assertNotIn("Traceback", ran.stderr)
        self.assertUntouched()
        for name in names:
            # doctor.json, not written, goes as an empty one would: the link itself, never what it points to.
            self.assertEqual(os.path.islink(os.path.join(out, name)), name != "doctor.json", name)
        self.assertIn("%s/meta.json: cannot write: a symbolic link" % out, ran.stderr)
        # The step's own log was a link: it was not run, and its row says so.
        self.assertIn("gdrb-sweep: cannot write %s/logs/01-fake_ok-host.out: a symbolic link" % out, ran.stderr)
        with open(os.path.join(out, "results.csv")) as f:
            rows = f.read().splitlines()
        # Measured again (a repeat of the failed row), where no link stands in the way.
        self.assertEqual(len(rows), 3)
        self.assertIn(",failed,", rows[1])
        self.assertIn(",ok,", rows[2])

    def test_links_for_the_directory_commands_txt_or_logs_refused(self):
        for name, said in (("", "--out: '%(out)s' is a symbolic link (never followed; give a directory)"),
                           ("logs", "cannot create %(out)s/logs: a symbolic link (never followed; give a directory)"),
                           ("commands.txt", "cannot write %(out)s/commands.txt: a symbolic link (never followed; "
                                            "remove it or choose another file)")):
            with self.subTest(link=name):
                out = os.path.join(self.tmp, "run-" + (name or "dir"))
                if name:
                    os.mkdir(out)
                os.symlink(self.victim if name == "commands.txt" else self.outside, os.path.join(out, name) if name
                           else out)
                ran = self.sweep(out)
                self.assertEqual(ran.returncode, 2 if not name else 1, ran.stderr)
                self.assertEqual(ran.stderr, "gdrb-sweep: " + said % {"out": out} + "\n")
                self.assertUntouched()

    def results_dir(self, out):
        s = sweep.Sweep.__new__(sweep.Sweep)
        s.o, s.p = sweep.Options(out=out), mock.Mock(label="test")
        s.results_dir()
        return s

    def test_two_sweeps_into_one_out_one_goes_on(self):
        out = os.path.join(self.tmp, "run")
        first = self.results_dir(out)
        with open(first.csv, "a") as f:
            f.write(ok_row("fake_ok") + "\n")
        # Even where the second sweep looks before the first has created results.csv, the claim is one.
        real = os.path.exists
        with mock.patch("os.path.exists", side_effect=lambda p: False if str(p).endswith("results.csv") else real(p)):
            with self.assertRaises(common.Stop) as cm:
                self.results_dir(out)
        self.assertEqual((cm.exception.status, cm.exception.message),
                         (2, "--out: '%s' already holds results; give a new directory" % out))
        with open(first.csv) as f:
            self.assertEqual(f.read().splitlines(), [common.schema().header, ok_row("fake_ok")])

    def test_read_only_out_says_why(self):
        import errno
        out = os.path.join(self.tmp, "ro", "run")
        os.mkdir(os.path.dirname(out))

        def read_only(*args, **kw):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        with mock.patch("os.mkdir", side_effect=read_only):
            with self.assertRaises(common.Stop) as cm:
                self.results_dir(out)
        self.assertEqual((cm.exception.status, cm.exception.message),
                         (2, "--out: cannot create '%s': Read-only file system" % out))
        os.mkdir(out)
        real = os.open
        with mock.patch("os.open", side_effect=lambda p, *a, **k: read_only() if str(p).endswith("results.csv")
                        else real(p, *a, **k)):
            with self.assertRaises(common.Stop) as cm:
                self.results_dir(out)
        self.assertEqual((cm.exception.status, cm.exception.message),
                         (2, "--out: cannot write in '%s': Read-only file system" % out))


if __name__ == "__main__":
    unittest.main()


class RepeatTest(Dir):
    """--repeat-failed: a step whose rows fail a rule is measured again at those sizes only, its
    rows appended as "attempt N"; a one-off dip passes after the repeat, a steady fault fails
    every attempt, a spread beyond spread= is INVALID, and a repeat that does not run is no pass."""

    def sweep(self, first, later, *args, rule="rule floor fake bw_GBps >= 40 GB/s sizes=8:64K", crash_later=False):
        """A sweep of a fake benchmark measuring FIRST GB/s on its first run and LATER after."""
        bin_dir = os.path.join(self.tmp, "bin-%d" % len(os.listdir(self.tmp)))
        os.mkdir(bin_dir)
        runs = os.path.join(bin_dir, "runs")
        row = ("fake,local,host,direct,host,,,,,all,%s,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,%s,"
               ",,1,1,,,,,,,,ok,0,ok,%s,2026-12-02T00:00:00Z,0.1.0,,,,,,,,,")
        stub(bin_dir, "gdrb_fake", """while [ $# -gt 0 ]; do case $1 in --csv) csv=$2;; -m) sizes=$2;; --label) label=$2;; esac
shift; done
echo run >>'%s'
n=$(wc -l <'%s')
bw=%s; [ "$n" -gt 1 ] && bw=%s
[ "$n" -gt 1 ] && [ %s = 1 ] && exit 1
printf '%%s\\n' '%s' >"$csv"
for s in $(echo "$sizes" | tr , ' '); do printf '%s\\n' "$s" "$bw" "$label" >>"$csv"; done""" % (
            runs, runs, first, later, "1" if crash_later else "0", common.schema().header, row))
        prof = os.path.join(self.tmp, "fake.profile")
        with open(prof, "w") as f:
            f.write("sizes 8,65536,1048576\nrun gdrb_fake launch=local\n" + rule + "\n")
        out = os.path.join(self.tmp, "run-%d" % len(os.listdir(self.tmp)))
        env = dict(os.environ)
        env.pop("SLURM_JOB_ID", None)
        proc = subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--profile", prof, "--bin-dir", bin_dir,
                               "--out", out] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True, timeout=300)
        with open(runs) as f:
            nruns = len(f.read().splitlines())
        with open(os.path.join(out, "results.csv")) as f:
            rows = [r.split(",") for r in f.read().splitlines()[1:]]
        verdict = {}
        if os.path.exists(os.path.join(out, "verdict.json")):
            with open(os.path.join(out, "verdict.json")) as f:
                verdict = json.load(f)
        return proc, nruns, rows, verdict, out

    def test_a_one_off_dip_passes_after_the_repeat(self):
        proc, nruns, rows, verdict, out = self.sweep("10.000000", "50.000000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(nruns, 2)
        # Every row kept: the first attempt's three sizes, the repeat's two (64K and 8 failed, 1M was not judged).
        self.assertEqual([(r[10], r[19], r[34]) for r in rows], [
            ("8", "10.000000", "fake"), ("65536", "10.000000", "fake"), ("1048576", "10.000000", "fake"),
            ("8", "50.000000", "fake; attempt 2"), ("65536", "50.000000", "fake; attempt 2")])
        self.assertEqual(verdict["verdict"], "PASS")
        self.assertEqual(verdict["rules"][0]["passed_on_repeat"], 2)
        self.assertIn("2 checks measured more than once, 2 failed and passed on a repeat: 8B: attempts 1: 10.00 GB/s "
                      "(fail), 2: 50.00 GB/s, spread 400%", proc.stdout)
        self.assertIn("repeat 1 of 2: step 1 (gdrb_fake mem=host) at 8B, 64KiB: rows that fail a rule, measured "
                      "again\n[1/1] gdrb_fake mem=host (attempt 2) 8B..64KiB", proc.stderr)
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["repeat_failed"], 2)
        self.assertEqual([(s["n"], s["attempt"], s["sizes"], s["log"]) for s in meta["steps"]],
                         [(1, 1, "8,65536,1048576", "logs/01-fake-host.log"), (1, 2, "8,65536", "logs/01-fake-host.attempt2.log")])

    def test_a_steady_fault_fails_every_attempt(self):
        proc, nruns, rows, verdict, _ = self.sweep("10.000000", "11.000000")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual((nruns, len(rows)), (3, 7))
        self.assertEqual(verdict["verdict"], "FAIL")
        self.assertIn("8B: every attempt failed: attempts 1: 10.00 GB/s (fail), 2: 11.00 GB/s (fail), "
                      "3: 11.00 GB/s (fail), spread 10%", proc.stdout)

    def test_no_repeat_with_zero(self):
        proc, nruns, rows, verdict, _ = self.sweep("10.000000", "50.000000", "--repeat-failed", "0")
        self.assertEqual((proc.returncode, nruns, len(rows), verdict["verdict"]), (1, 1, 3, "FAIL"))
        # The profile's own setting, when no option is given.
        proc, nruns, _, _, _ = self.sweep("10.000000", "11.000000", rule="repeat-failed 1\n"
                                          "rule floor fake bw_GBps >= 40 GB/s sizes=8:64K")
        self.assertEqual((proc.returncode, nruns), (1, 2))

    def test_an_unstable_figure_is_invalid(self):
        proc, _, _, verdict, _ = self.sweep("10.000000", "50.000000",
                                            rule="rule floor fake bw_GBps >= 40 GB/s sizes=8:64K spread=20%")
        self.assertEqual((proc.returncode, verdict["verdict"], verdict["rules"][0]["unstable_checks"]),
                         (1, "INVALID", 2))

    def test_a_repeat_that_does_not_run_is_no_pass(self):
        proc, nruns, rows, verdict, _ = self.sweep("10.000000", "50.000000", "--repeat-failed", "1", crash_later=True)
        self.assertEqual((proc.returncode, nruns, verdict["verdict"]), (1, 2, "FAIL"))
        self.assertEqual([(r[10], r[31]) for r in rows[3:]], [("8", "failed"), ("65536", "failed")])
        self.assertTrue(rows[3][34].endswith("; attempt 2"), rows[3][34])

    def test_a_count_out_of_range_is_refused(self):
        for bad in ("11", "-1", "x", "1.5", "007"):
            with self.assertRaises(common.Stop) as cm:
                sweep.parse_args(["--repeat-failed", bad])
            self.assertEqual(cm.exception.status, 2)
        proc = subprocess.run([sys.executable, str(gdrbtest.GDRB), "sweep", "--repeat-failed", "11"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual((proc.returncode, proc.stderr.strip().splitlines()),
                         (2, ["gdrb-sweep: --repeat-failed: expected a count from 0 to 10, got '11'"]))
