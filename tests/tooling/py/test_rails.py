"""gdrb rails: the verdict (a steady fault named with its GPU, NIC, switch and counters; a one-off
dip passes after the repeat; a rail not measured is INVALID; simulated rows never PASS), bad
usage in one line with exit 2, and whole runs on a made-up launcher that writes pairs.csv."""
import contextlib
import dataclasses
import io
import os
import stat
import tempfile
import textwrap
import unittest

import gdrbtest  # noqa: F401  (scripts/lib on sys.path)
from gdrbtool import cli, pairs, rails, rails_floor
from gdrbtool.rails import Pair, RailRun

HOSTS = ["n1", "n2", "n3"]


def run_of(rail, bw=10.0, slow=None, factor=0.3, hosts=HOSTS, note=""):
    """A rail's run: every ordered pair at BW GB/s, the sends of host SLOW at FACTOR of it."""
    r = RailRun(rail, "mlx5_%d" % rail)
    for s in hosts:
        for d in hosts:
            if s != d:
                r.pairs[(s, d)] = Pair(s, d, bw * (factor if s == slow else 1.0), "0000:%02x:00.0" % (0x13 + rail),
                                       "mlx5_%d" % rail, "0000:%02x:00.0" % (0x13 + rail), "mlx5_%d" % rail, 0)
    if note:
        r.simulated = note
    return r


def cli_run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv), "")
    return status, out.getvalue(), err.getvalue()


class Judge(unittest.TestCase):
    def test_healthy(self):
        v = rails.judge(HOSTS, [run_of(0), run_of(1)], [[run_of(0, 9.5), run_of(1, 9.0)]], 80)
        self.assertEqual(v.overall, "PASS")
        self.assertEqual(v.status, 0)
        self.assertFalse(v.suspects)
        self.assertIn("node n1: aggregate of 2 rails 18.5 GB/s with all rails loaded, 20.0 GB/s", "\n".join(v.lines))

    def test_steady_fault_named(self):
        """Rail 1 of n2 sends at 30% under load in both attempts: named, with its parts."""
        alone = [run_of(0), run_of(1), run_of(2)]
        loaded = [run_of(0), run_of(1, slow="n2"), run_of(2)]
        v = rails.judge(HOSTS, alone, [loaded, loaded], 80, {"0000:14:00.0": "0000:11:00.0"})
        self.assertEqual(v.overall, "FAIL")
        self.assertEqual(v.status, 1)
        self.assertEqual(len(v.suspects), 1)
        s = v.suspects[0]
        self.assertEqual((s.rail, s.kind, s.where, s.direction), (1, "node", "n2", "sends"))
        line = rails.suspect_line(s, 80)
        self.assertIn("node n2 rail 1, its sends: below 80% of alone in every attempt "
                      "(attempt 1: 30%, 30%; attempt 2: 30%, 30%)", line)
        self.assertIn("GPU 0000:14:00.0, NIC mlx5_1, PCIe switch 0000:11:00.0; NIC errors +0", line)
        # The receivers of n2's sends are not named: their other peer is fine.
        self.assertFalse([x for x in v.suspects if x.where in ("n1", "n3")])

    def test_node_of_the_low_pairs(self):
        """n2's rail 2: one send and one receive low in every attempt, the others not: n2 is at
        an end of both low pairs and is named; no link is."""
        loaded = run_of(2)
        loaded.pairs[("n2", "n1")].bw = 2.5
        loaded.pairs[("n3", "n2")].bw = 2.6
        v = rails.judge(HOSTS, [run_of(2)], [[loaded], [loaded]], 60)
        self.assertEqual(v.overall, "FAIL")
        self.assertEqual([(s.kind, s.where, s.direction) for s in v.suspects], [("node", "n2", "pairs")])
        self.assertIn("FAIL node n2 rail 2, its pairs (n2 -> n1, n3 -> n2): below 60% of alone in every attempt "
                      "(attempt 1: 25%, 26%; attempt 2: 25%, 26%)", rails.suspect_line(v.suspects[0], 60))

    def test_one_off_dip_passes(self):
        """Low in attempt 1, fine in attempt 2: not named; both attempts are in rails.csv."""
        alone = [run_of(0), run_of(1)]
        v = rails.judge(HOSTS, alone, [[run_of(0), run_of(1, slow="n2")], [run_of(0), run_of(1)]], 80)
        self.assertEqual(v.overall, "PASS")
        self.assertEqual(sum(1 for r in v.rows if r.startswith("all,1,1,") and ",yes," in r), 2)
        self.assertEqual(sum(1 for r in v.rows if r.startswith("all,2,")), 12)

    def test_two_nodes_link(self):
        """With two nodes a low pair names both ends: no node can be told apart."""
        hosts = ["a", "b"]
        v = rails.judge(hosts, [run_of(0, hosts=hosts)], [[run_of(0, slow="a", hosts=hosts)]], 80)
        self.assertEqual(v.overall, "FAIL")
        self.assertEqual((v.suspects[0].kind, v.suspects[0].where), ("link", "a -> b"))
        self.assertIn("switch not known (give --doctor)", rails.suspect_line(v.suspects[0], 80))

    def test_threshold(self):
        """At 30%: below 80 fails, --below 25 passes."""
        alone, loaded = [run_of(0)], [[run_of(0, slow="n3")]]
        self.assertEqual(rails.judge(HOSTS, alone, loaded, 80).overall, "FAIL")
        self.assertEqual(rails.judge(HOSTS, alone, loaded, 25).overall, "PASS")

    def test_not_measured_is_invalid(self):
        gone = run_of(1)
        del gone.pairs[("n3", "n1")]
        failed = RailRun(1, "mlx5_1", fault="the job exited 1 (all-1/rail-1/launch.log)")
        for loaded in ([run_of(0), gone], [run_of(0), failed]):
            v = rails.judge(HOSTS, [run_of(0), run_of(1)], [loaded], 80)
            self.assertEqual(v.overall, "INVALID")
            self.assertEqual(v.status, 3)
            self.assertIn("rail 1 (mlx5_1) with all rails, attempt 1", v.invalid[0])
        v = rails.judge(HOSTS, [run_of(0), failed], [[run_of(0), run_of(1)]], 80)
        self.assertEqual(v.overall, "INVALID")
        self.assertIn("rail 1 (mlx5_1) alone: the job exited 1", v.invalid[0])

    def test_simulated_never_passes(self):
        v = rails.judge(HOSTS, [run_of(0, note="gdrbench simulated GPU")], [[run_of(0)]], 80)
        self.assertEqual(v.overall, "SIMULATED")
        self.assertEqual(v.status, 1)


def fake_bed(folder, hosts, slow="", bw=10.0):
    """A made-up mpirun in FOLDER: `hostname` answers on HOSTS only ("unknown host" else); a
    job of an all-pairs binary writes pairs.csv for every ordered pair of its --host list at BW
    GB/s, one of gdrb_nccl_sendrecv one results.csv row; the sends of SLOW ("NIC:HOST:RUNS",
    e.g. "mlx5_1:n2:1,2"; HOST * for the NCCL row) at 3 GB/s in those all-rails attempts (and
    alone where RUNS holds "alone"). The rail's NIC is --ib-dev's or the -x variable's value.
    Each job's command line is appended to FOLDER/jobs.log. And the layers' binaries, each
    answering --describe, for find_bin to find."""
    header = pairs.pairs_header()
    script = textwrap.dedent('''\
        #!/usr/bin/env python3
        import itertools, os, sys
        a = sys.argv[1:]
        hosts = a[a.index("--host") + 1].split(",")
        if a[-1] == "hostname":
            bad = [h for h in hosts if h not in %r]
            if bad:
                sys.stderr.write("mpirun: unknown host %%s\\n" %% bad[0])
                sys.exit(1)
            sys.exit(0)
        with open(os.path.join(%r, "jobs.log"), "a") as f:
            f.write(" ".join(a) + "\\n")
        nic = a[a.index("--ib-dev") + 1] if "--ib-dev" in a else a[a.index("-x") + 1].split("=", 1)[1]
        nic = nic.lstrip("=^").split(":")[0]
        csv = a[a.index("--csv") + 1]
        size = a[a.index("-m") + 1]
        mem = a[a.index("--mem") + 1]
        run = os.path.basename(os.path.dirname(os.path.dirname(csv)))
        slow_nic, slow_host, tries = (%r.split(":") + ["", "", ""])[:3]
        def bw(s):
            hit = nic == slow_nic and s == slow_host and (run == "alone" and "alone" in tries.split(",") or
                                                          run.startswith("all-") and run[4:] in tries.split(","))
            return "%%g" %% (3.0 if hit else %r)
        with open(csv, "a") as f:
            if csv.endswith("results.csv"):
                f.write("benchmark,mem,path,size_bytes,bw_GBps,gpu,nic,library,status,note\\n")
                used = os.environ.get("FAKE_NCCL_NIC", nic + ":1")
                f.write("nccl_sendrecv,%%s,direct,%%s,%%s,H100,%%s,NCCL 2.0,ok,\\n" %% (mem, size, bw("*"), used))
                sys.exit(0)
            cols = %r.split(",")
            f.write(",".join(cols) + "\\n")
            for s, d in itertools.permutations(hosts, 2):
                row = dict(benchmark="mpi_pairs", layer="mpi", mem=mem, path="direct", reg="host", metric="bw",
                           size_bytes=size, round="1", src_host=s, dst_host=d, src_gpu="", dst_gpu="",
                           src_nic=nic, dst_nic=nic, bw_GBps=bw(s), status="ok", nic_errors="")
                f.write(",".join(row.get(c, "") for c in cols) + "\\n")
        ''') % (hosts, folder, slow, bw, header)
    mpirun = os.path.join(folder, "mpirun")
    with open(mpirun, "w") as f:
        f.write(script)
    os.chmod(mpirun, 0o755)
    gdrbtest.described_bins(folder, sorted(rails.LAYER_BINARY.values()))
    return mpirun


class TempDirCase(unittest.TestCase):
    """A test with a folder of its own (self.dir), removed after it."""
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()


class Run(TempDirCase):
    def rails(self, slow, *more, hosts="n1,n2,n3"):
        mpirun = fake_bed(self.dir, ["n1", "n2", "n3"], slow)
        out = os.path.join(self.dir, "out")
        return out, cli_run("rails", "--hosts", hosts, "--nics", "mlx5_0,mlx5_1,mlx5_2", "--mem", "host",
                            "--nic-env", "FAKE_NIC={nic}", "--mpirun", mpirun, "--bin-dir", self.dir,
                            "--time", "0.1", "--lead", "1", *more, out)

    def test_steady_fault_fails_every_attempt(self):
        out, (status, stdout, err) = self.rails("mlx5_1:n2:1,2")
        self.assertEqual(status, 1, stdout + err)
        self.assertIn("FAIL node n2 rail 1, its sends: below 80% of alone in every attempt "
                      "(attempt 1: 30%, 30%; attempt 2: 30%, 30%)", stdout)
        self.assertIn("(gdrbench's own estimate)", stdout)
        self.assertIn("rails: FAIL: rail 1 below 80% of alone under load", stdout)
        with open(os.path.join(out, "verdict.txt")) as f:
            self.assertEqual(f.read(), stdout)
        with open(os.path.join(out, "rails.csv")) as f:
            rows = f.read().splitlines()
        self.assertEqual(rows[0], rails.RAILS_CSV_HEADER.strip())
        self.assertEqual(len(rows), 1 + 3 * 6 + 2 * 3 * 6)
        self.assertEqual(sorted(os.listdir(out)), ["all-1", "all-2", "alone", "rails.csv", "verdict.txt"])

    def test_one_off_dip_passes_after_the_repeat(self):
        out, (status, stdout, err) = self.rails("mlx5_1:n2:1", "--below", "75")
        self.assertEqual(status, 0, stdout + err)
        self.assertIn("rails: PASS", stdout)
        self.assertTrue(os.path.isdir(os.path.join(out, "all-2")))

    def test_single_attempt_fails_a_dip(self):
        out, (status, stdout, err) = self.rails("mlx5_1:n2:1", "--attempts", "1")
        self.assertEqual(status, 1, stdout + err)
        self.assertFalse(os.path.isdir(os.path.join(out, "all-2")))

    def test_unknown_host(self):
        out, (status, stdout, err) = self.rails("", hosts="n1,n2,n9")
        self.assertEqual(status, 2)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertRegex(err, r"^gdrb-rails: --hosts: cannot start a process on every host of 'n1,n2,n9' "
                              r"\(.* exited 1: mpirun: unknown host n9\)")
        self.assertFalse(os.path.exists(out))

    def test_earlier_run_refused(self):
        out, (status, _, _) = self.rails("")
        self.assertEqual(status, 0)
        status, stdout, err = cli_run("rails", "--hosts", "n1,n2", "--nics", "mlx5_0", "--mpirun",
                                      os.path.join(self.dir, "mpirun"), "--bin-dir", self.dir, out)
        self.assertEqual(status, 2)
        self.assertIn("holds an earlier rails run (alone/); give a new OUTDIR", err)


class ThreeNodeBed(TempDirCase):
    """A fake bed of three nodes of three rails each (fake_bed), in a directory of the test's."""
    def rails(self, slow, *more, bw=10.0):
        mpirun = fake_bed(self.dir, ["n1", "n2", "n3"], slow, bw)
        out = tempfile.mkdtemp(dir=self.dir)
        return out, cli_run("rails", "--hosts", "n1,n2,n3", "--nics", "mlx5_0,mlx5_1,mlx5_2", "--mpirun", mpirun,
                            "--bin-dir", self.dir, "--time", "0.1", "--lead", "1", *more, out)


class Layers(ThreeNodeBed):
    """--layer verbs and nccl: the command lines each binary's --describe calls for, and the
    verdict on what they measured."""

    def jobs(self):
        with open(os.path.join(self.dir, "jobs.log")) as f:
            return f.read().splitlines()

    def test_verbs(self):
        """gdrb_write_pairs on each rail's NIC by --ib-dev (no launcher variable), started
        together by --start-at; a steady fault named as with MPI."""
        out, (status, stdout, err) = self.rails("mlx5_1:n2:1,2", "--layer", "verbs", "--mem", "device")
        self.assertEqual(status, 1, stdout + err)
        jobs = self.jobs()
        self.assertEqual(len(jobs), 3 + 2 * 3)
        for line in jobs:
            self.assertIn("gdrb_write_pairs -m 8388608 -t 0.1 --mem device --csv ", line)
            self.assertNotIn(" -x ", line)
            self.assertNotIn("--nccl-net-only", line)
        self.assertIn("--metric bw --ib-dev mlx5_1 --gpu 1", jobs[1])
        self.assertNotIn("--start-at", jobs[1])
        self.assertEqual(sum("--start-at" in j and "--round-every 2.3" in j for j in jobs), 6)
        self.assertIn("layer verbs (gdrb_write_pairs), device memory", stdout)
        self.assertIn("FAIL node n2 rail 1, its sends: below 80% of alone in every attempt", stdout)
        self.assertTrue(os.path.isfile(os.path.join(out, "all-2", "rail-1", "pairs.csv")))

    def test_verbs_takes_no_nic_env(self):
        _, (status, _, err) = self.rails("", "--layer", "verbs", "--nic-env", "X={nic}")
        self.assertEqual(status, 2)
        self.assertIn("--nic-env: the verbs layer gives each rail's NIC with --ib-dev; drop --nic-env", err)

    def test_nccl(self):
        """gdrb_nccl_sendrecv --nccl-net-only on each rail's NIC by NCCL_IB_HCA's exact match; no
        --start-at (the report says the jobs only start together); the rail is one figure."""
        out, (status, stdout, err) = self.rails("mlx5_2:*:1,2", "--layer", "nccl", "--mem", "device")
        self.assertEqual(status, 1, stdout + err)
        jobs = self.jobs()
        self.assertIn("-x NCCL_IB_HCA==mlx5_2 ", jobs[2])
        for line in jobs:
            self.assertIn("--nccl-net-only", line)
            self.assertNotIn("--start-at", line)
            self.assertNotIn("--metric", line)
            self.assertIn("/results.csv", line)
        self.assertIn("all rails at once: gdrb_nccl_sendrecv has no --start-at: the jobs were started together", stdout)
        self.assertIn("rail 0 (mlx5_0), each rank's bandwidth, alone -> all rails: all nodes 10.0 -> 10.0 GB/s (100%)",
                      stdout)
        self.assertIn("FAIL rail 2 (all nodes): below 80% of alone in every attempt (attempt 1: 30%; attempt 2: 30%); "
                      "GPU 2 (--gpu) on each node, NIC mlx5_2:1, PCIe switch not known (give --doctor)", stdout)
        self.assertIn("rails: FAIL: rail 2 below 80% of alone under load", stdout)

    def test_nccl_off_its_rail(self):
        """A NCCL whose log names another device than the rail's (it ignored NCCL_IB_HCA), or
        none: the rail is not measured (INVALID), its figure not judged."""
        from unittest import mock
        with mock.patch.dict(os.environ, {"FAKE_NCCL_NIC": "mlx5_0:1"}):
            _, (status, stdout, err) = self.rails("", "--layer", "nccl", "--mem", "device")
        self.assertEqual(status, 3, stdout + err)
        self.assertRegex(stdout, r"INVALID rail 1 \(mlx5_1\) alone: .*/alone/rail-1/results.csv: the library used "
                                 r"mlx5_0, not mlx5_1 alone")
        self.assertNotIn("INVALID rail 0 ", stdout)
        self.assertIn("rail 1 (mlx5_1), each rank's bandwidth, alone -> all rails: all nodes not measured", stdout)
        with mock.patch.dict(os.environ, {"FAKE_NCCL_NIC": "mlx5_1:1+mlx5_0:1"}):
            _, (status, stdout, _) = self.rails("", "--layer", "nccl", "--mem", "device")
        self.assertEqual(status, 3)
        self.assertIn("the library used mlx5_0+mlx5_1, not mlx5_1 alone", stdout)
        with mock.patch.dict(os.environ, {"FAKE_NCCL_NIC": ""}):
            _, (status, stdout, _) = self.rails("", "--layer", "nccl", "--mem", "device")
        self.assertEqual(status, 3)
        self.assertIn("which NIC the library used is not known (its log named none): the rail is not shown to be on mlx5_0",
                      stdout)

    def test_nccl_own_variable_and_no_window(self):
        self.rails("", "--layer", "nccl", "--mem", "host", "--nic-env", "NCCL_IB_HCA=^{nic}")
        self.assertIn("-x NCCL_IB_HCA=^mlx5_0 ", self.jobs()[0])
        _, (status, _, err) = self.rails("", "--layer", "nccl", "--window", "4")
        self.assertEqual(status, 2)
        self.assertIn("--window: gdrb_nccl_sendrecv takes no window", err)
        _, (status, _, err) = self.rails("", "--layer", "nccl", "--path", "staged", "--mem", "device")
        self.assertEqual(status, 2)
        self.assertIn("--path: gdrb_nccl_sendrecv measures direct on device memory, not staged", err)

    def test_nccl_simulated_never_passes(self):
        """A results.csv row of the simulated GPU or NCCL (its gpu, library columns) marks the run."""
        folder = os.path.join(self.dir, "r")
        os.makedirs(folder)
        with open(os.path.join(folder, "results.csv"), "w") as f:
            f.write("benchmark,mem,path,size_bytes,bw_GBps,gpu,nic,library,status,note\n"
                    "nccl_sendrecv,device,direct,1048576,9.5,gdrbench simulated GPU (simgpu),mlx5_0:1,"
                    "NCCL 2.0 (simulated),ok,\n")
        run = rails.read_run(RailRun(0, "mlx5_0"), folder, "device", "direct", 1 << 20, whole=True)
        self.assertEqual(run.pairs[(rails.WHOLE, rails.WHOLE)].bw, 9.5)
        v = rails.judge([rails.WHOLE], [run], [[run]], 80)
        self.assertEqual(v.overall, "SIMULATED")
        empty = rails.read_run(RailRun(0, "mlx5_0"), self.dir, "device", "direct", 1 << 20, whole=True)
        v = rails.judge([rails.WHOLE], [run], [[empty]], 80)
        self.assertEqual(v.overall, "INVALID")
        self.assertIn("results.csv: cannot read", v.invalid[0])

    def test_real_binaries_take_the_options(self):
        """The built binaries describe the options gdrb rails gives them (skipped where not built)."""
        from gdrbtool import facts
        need = {"gdrb_mpi_pairs": ("start-at", "round-every", "metric", "window", "gpu", "csv"),
                "gdrb_write_pairs": ("start-at", "round-every", "metric", "window", "gpu", "csv", "ib-dev"),
                "gdrb_nccl_sendrecv": ("nccl-net-only", "gpu", "csv")}
        seen = 0
        for name, layer in (("gdrb_mpi_pairs", "mpi"), ("gdrb_write_pairs", "verbs"), ("gdrb_nccl_sendrecv", "nccl")):
            binary = rails.find_bin(name, [str(gdrbtest.BUILD)])
            if not binary:
                continue
            fx = facts.describe(binary)
            self.assertEqual((fx.layer, fx.all_pairs), (layer, layer != "nccl"), name)
            self.assertFalse([o for o in need[name] if o not in fx.options], name)
            seen += 1
        if not seen:
            self.skipTest("no rails binary built")


class Floors(ThreeNodeBed):
    """--floor and --sku: each rail's figure alone and loaded judged against the per-NIC floor."""

    def test_rail_below_the_floor_fails(self):
        """n2's rail 1 sends at 3 GB/s (24 Gb/s) alone and loaded: at 100% of itself, so only the
        floor names it, with its NIC and the floor's source."""
        _, (status, stdout, err) = self.rails("mlx5_1:n2:alone,1,2", "--floor", "40", "--mem", "host")
        self.assertEqual(status, 1, stdout + err)
        self.assertIn("per-NIC floor: 40 Gb/s (--floor; source: given with --floor)", stdout)
        self.assertIn("FAIL node n2 rail 1 below the per-NIC floor 40 Gb/s (--floor; source: given with --floor) "
                      "alone and in every all-rails attempt (alone 24.0 Gb/s, all rails attempt 1: 24.0 Gb/s; "
                      "attempt 2: 24.0 Gb/s); GPU not recorded, NIC mlx5_1", stdout)
        self.assertNotIn("below 80% of alone", stdout)
        self.assertIn("rails: FAIL: rail 1 below the per-NIC floor 40 Gb/s", stdout)

    def test_all_above_the_floor_passes(self):
        _, (status, stdout, err) = self.rails("", "--floor", "40", "--mem", "host")
        self.assertEqual(status, 0, stdout + err)
        self.assertIn("rails: PASS: every rail at 80% of alone or more with all rails loaded and at the per-NIC "
                      "floor 40 Gb/s or above, alone and loaded", stdout)

    def test_one_off_dip_below_the_floor_passes(self):
        out, (status, stdout, err) = self.rails("mlx5_1:n2:1", "--floor", "40", "--mem", "host", "--below", "20")
        self.assertEqual(status, 0, stdout + err)
        self.assertTrue(os.path.isdir(os.path.join(out, "all-2")))

    def test_sku(self):
        """--sku h200: the profile's 360 Gb/s with its source; 80 Gb/s rails fail it, 400 pass."""
        _, (status, stdout, err) = self.rails("", "--sku", "h200", "--mem", "device", "--size", "1M")
        self.assertEqual(status, 1, stdout + err)
        self.assertIn("per-NIC floor of SKU h200: 360 Gb/s (rule h200-gdr-write of hgx-h200; source: "
                      "https://github.com/Azure/azurehpc-health-checks/", stdout)
        self.assertEqual(len([x for x in stdout.splitlines() if x.startswith("FAIL node ") and
                              "below the per-NIC floor 360 Gb/s" in x]), 9)
        self.assertIn("FAIL node n3 rail 2 below the per-NIC floor 360 Gb/s", stdout)
        self.assertIn("rails: FAIL: rail 0, rail 1, rail 2 below the per-NIC floor 360 Gb/s", stdout)
        _, (status, stdout, err) = self.rails("", "--sku", "h200", "--mem", "device", "--size", "1M", bw=50.0)
        self.assertEqual(status, 0, stdout + err)

    def test_estimate_said(self):
        f, why = rails_floor.of_sku("b200")
        self.assertEqual(why, "")
        self.assertEqual((f.text, f.mem, f.path, f.sizes), ("360 Gb/s", "device", "direct", "1048576"))
        self.assertIn("gdrbench's own estimate: the DGX B200", f.cited())
        f, _ = rails_floor.of_sku("h100")
        self.assertAlmostEqual(f.value, 47.5)

    def test_sku_without_a_floor_is_never_a_pass(self):
        from unittest import mock
        from gdrbtool import inventory
        prof = os.path.join(self.dir, "nofloor.profile")
        with open(prof, "w") as f:
            f.write("description no floor\nrun gdrb_copy_bw mem=none sizes=1M paths=pinned:h2d\n"
                    "rule x copy_bw bw_GBps >= 1 GB/s path=h2d source=\"estimate: a test profile without a NIC floor\"\n")
        sku = dataclasses.replace(inventory.SKUS["h100"], name="z1", profile=prof)
        with mock.patch.dict(inventory.SKUS, {"z1": sku}):
            f, why = rails_floor.of_sku("z1")
            self.assertIsNone(f)
            self.assertIn("has no per-NIC GPUDirect floor", why)
            _, (status, stdout, err) = self.rails("", "--sku", "z1", "--mem", "host")
        self.assertEqual(status, 3, stdout + err)
        self.assertIn("INVALID no per-NIC floor: the %s profile has no per-NIC GPUDirect floor" % prof, stdout)
        self.assertIn("rails: INVALID", stdout)

    def test_bad_floor_and_sku(self):
        base = ["--hosts", "n1,n2", "--nics", "mlx5_0"]
        for v in ("0", "abc", "1e9", "-3"):
            Usage.refused(self, *base, "--floor", v, "out", want="--floor: expected Gb/s per NIC, a number from 1 to 100000")
        Usage.refused(self, *base, "--sku", "z900", "out", want="--sku: unknown SKU 'z900'; known: a100, b200, h100, h200")
        Usage.refused(self, *base, "--sku", "h100", "--floor", "300", "out", want="--floor: give --sku or --floor, not both")
        Usage.refused(self, *base, "--sku", "h100", "--mem", "host", "out",
                      want="--sku: its floor 380 Gb/s is for mem=device path=direct sizes=1048576; run with "
                           "--mem device --size 1MiB")
        Usage.refused(self, *base, "--layer", "ucx", "out", want="--layer: expected mpi or verbs or nccl, got 'ucx'")


class Usage(unittest.TestCase):
    def refused(self, *argv, want):
        status, out, err = cli_run("rails", *argv)
        self.assertEqual(status, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn(want, err)

    def test_bad_options(self):
        base = ["--hosts", "n1,n2", "--nics", "mlx5_0"]
        for below in ("0", "101", "abc", "-5", "1e3", "nan"):
            self.refused(*base, "--below", below, "out",
                         want="--below: expected a percentage from 1 to 100, got '%s'" % below)
        self.refused(*base, "--attempts", "10", "out", want="--attempts: expected a whole number from 1 to 9")
        self.refused("--hosts", "n1", "--nics", "mlx5_0", "out", want="--hosts: expected 2 to 256 hosts")
        self.refused("--hosts", "n1,n1", "--nics", "mlx5_0", "out", want="--hosts: 'n1' given twice")
        self.refused("--hosts", "n1,-x", "--nics", "mlx5_0", "out", want="--hosts: '-x' is not a host")
        self.refused("--hosts", "n1,n2", "out", want="--nics: expected each rail's NIC")
        self.refused(*base, "--nic-env", "UCX_NET_DEVICES=mlx5_0", "out", want="--nic-env: expected VAR=TEXT with {nic}")
        self.refused(*base, "--mem", "gpu", "out", want="--mem: expected device or pinned or host, got 'gpu'")
        self.refused(*base, "--size", "2G", "out", want="--size: expected a size from 1 to 1G")
        self.refused(*base, "--frobnicate", "out", want="unknown option '--frobnicate'")
        self.refused(*base, want="expected one OUTDIR")
        self.refused(*base, "--below", want="--below needs a value")

    def test_doctor(self):
        """--doctor: each GPU's switch from gdrb_doctor --json; a file that is not the doctor's JSON
        is one line, exit 2."""
        import json
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "doctor.json")
            with open(good, "w") as f:
                json.dump({"topology": {"gpus": [{"pci": "0000:13:00.0", "switch": "0000:11:00.0"},
                                                 {"pci": "0000:b3:00.0", "switch": None}]}}, f)
            self.assertEqual(rails.switches(good), {"0000:13:00.0": "0000:11:00.0"})
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{\"topology\": 1}")
            self.refused("--hosts", "n1,n2", "--nics", "mlx5_0", "--doctor", bad, os.path.join(d, "out"),
                         want="--doctor: %s has no topology.gpus" % bad)
            with open(bad, "w") as f:
                f.write("not json")
            self.refused("--hosts", "n1,n2", "--nics", "mlx5_0", "--doctor", bad, os.path.join(d, "out"),
                         want="bad.json: not JSON")
            self.assertFalse(os.path.exists(os.path.join(d, "out")))

    def test_help(self):
        status, out, _ = cli_run("rails", "--help")
        self.assertEqual(status, 0)
        self.assertIn("gdrb rails --hosts H1,H2,... --nics NIC0,NIC1,...", out)


if __name__ == "__main__":
    unittest.main()
