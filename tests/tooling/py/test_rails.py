"""gdrb rails: the verdict (a steady fault named with its GPU, NIC, switch and counters; a one-off
dip passes after the repeat; a rail not measured is INVALID; simulated rows never PASS), bad
usage in one line with exit 2, and whole runs on a made-up launcher that writes pairs.csv."""
import contextlib
import io
import os
import stat
import tempfile
import textwrap
import unittest

import gdrbtest  # noqa: F401  (scripts/lib on sys.path)
from gdrbtool import cli, pairs, rails
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


def fake_bed(folder, hosts, slow=""):
    """A made-up mpirun in FOLDER: `hostname` answers on HOSTS only ("unknown host" else); a
    gdrb_mpi_pairs job writes pairs.csv for every ordered pair of its --host list at 10 GB/s,
    the sends of SLOW ("NIC:HOST:ATTEMPTS", e.g. "mlx5_1:n2:1,2") at 3 GB/s in those all-rails
    attempts. And a gdrb_mpi_pairs for find_bin to find."""
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
        env = a[a.index("-x") + 1].split("=", 1)[1]
        csv = a[a.index("--csv") + 1]
        size = a[a.index("-m") + 1]
        attempt = os.path.basename(os.path.dirname(os.path.dirname(csv)))
        nic, slow_host, tries = (%r.split(":") + ["", "", ""])[:3]
        cols = %r.split(",")
        with open(csv, "a") as f:
            f.write(",".join(cols) + "\\n")
            for s, d in itertools.permutations(hosts, 2):
                bw = 10.0
                if env == nic and s == slow_host and attempt.startswith("all-") and attempt[4:] in tries.split(","):
                    bw = 3.0
                row = dict(benchmark="mpi_pairs", layer="mpi", mem="host", path="direct", reg="host", metric="bw",
                           size_bytes=size, round="1", src_host=s, dst_host=d, src_gpu="", dst_gpu="",
                           src_nic=env, dst_nic=env, bw_GBps="%%g" %% bw, status="ok", nic_errors="")
                f.write(",".join(row.get(c, "") for c in cols) + "\\n")
        ''') % (hosts, slow, header)
    mpirun = os.path.join(folder, "mpirun")
    with open(mpirun, "w") as f:
        f.write(script)
    os.chmod(mpirun, 0o755)
    binary = os.path.join(folder, "gdrb_mpi_pairs")
    with open(binary, "w") as f:
        f.write("#!/bin/sh\nexit 1\n")
    os.chmod(binary, stat.S_IRWXU)
    return mpirun


class Run(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

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
