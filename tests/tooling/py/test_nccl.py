"""NCCL in the tool: the "gdr_connections all" rule on G/N, 0/0, unknown and malformed values
(and its malformed forms refused); a simulated NCCL's rows SIMULATED; the direct and staged rows
of two NCCL launches paired by the "% of staged" rules (a fixture that must fail, one that must
pass), in-place rows with in-place rows only, a version 2 file as before; run lines of NCCL
binaries (layer, memory, paths from --nccl-gdr); the shipped profile."""
import os
import unittest

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtool import common, plot, profile, report
from test_accept import AcceptCase

LIB = "NCCL 2.28.9"
UNUSED = "GPUDirect allowed but NCCL used NET/IB without GDRDMA on 16 of 16 connections"
UNKNOWN = ("transport unknown: NCCL's log on rank 0 (node1) could not be read: NCCL log /x: "
           "No such file or directory")
RUNS = ("run gdrb_nccl_allreduce args=--nccl-gdr=on\n"
        "run gdrb_nccl_allreduce args=--nccl-gdr=off\n")


def row(path="direct", size=8, gdr="16/16", transport="NET/IB", note="", lat="10.0", busbw="1.0",
        library=LIB, status="ok", bench="nccl_allreduce", placement="out-of-place"):
    """One aggregate NCCL row of the schema, as a binary writes it."""
    f = dict.fromkeys(common.schema().columns, "")
    f.update(benchmark=bench, layer="nccl", mem="device", path=path, reg="nccl", pair="all",
             size_bytes=str(size), iterations="100", lat_min_us=lat, lat_p50_us=lat, lat_avg_us=lat,
             lat_p99_us=lat, lat_p999_us=lat, lat_max_us=lat, lat_stdev_us="0.1", bw_GBps=busbw,
             algbw_GBps=busbw, busbw_GBps=busbw, ranks="16", hosts="2", gpu="NVIDIA H100 80GB HBM3",
             status=status, errors="0", quality="ok" if status == "ok" else "", note=note,
             timestamp="2026-11-21T04:41:00Z", version="0.1.0", transport=transport, gdr_connections=gdr,
             library=library, placement=placement)
    return ",".join(common.csv_text(f[c]) for c in common.schema().columns)


class NcclCase(AcceptCase):
    def results(self, *rows, version=0):
        """A results directory of ROWS; VERSION (of the schema): its header, and its columns
        of each row (0: this version's)."""
        s = common.schema()
        n = s.widths[version or s.version]
        d = os.path.join(self.work, "run-%d" % len(os.listdir(self.work)))
        os.mkdir(d)
        with open(os.path.join(d, "results.csv"), "w", encoding="utf-8") as f:
            f.write(",".join(s.columns[:n]) + "\n" + "".join(",".join(common.csv_split(r)[:n]) + "\n" for r in rows))
        return d

    def nccl_profile(self, *rules):
        path = os.path.join(self.work, "nccl-%d.profile" % len(os.listdir(self.work)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(RUNS + "".join(r + "\n" for r in rules))
        return path

    def judge(self, *rows, rule="rule used nccl_allreduce gdr_connections all"):
        ran = self.accept(self.results(*rows), self.nccl_profile(rule))
        return ran, ran.verdict()["rules"][0]


class GdrUsedRule(NcclCase):
    def test_every_connection_passes(self):
        ran, r = self.judge(row(size=8), row(size=1 << 20, gdr="8/8"))
        self.assertEqual((ran.status, r["verdict"], r["checked"]), (0, "PASS", 2), ran.out)
        self.assertIn("nccl_allreduce gdr_connections all (path=direct, all sizes)", ran.out)

    def test_staged_rows_are_not_judged_unless_asked(self):
        ran, r = self.judge(row(), row(path="staged", gdr="0/16"))
        self.assertEqual((r["verdict"], r["checked"]), ("PASS", 1), ran.out)

    def test_fewer_gdr_connections_fail_with_the_notes_reason(self):
        ran, r = self.judge(row(gdr="0/16", note=UNUSED + "; NCCL_NET_GDR_LEVEL=SYS"))
        self.assertEqual((ran.status, r["verdict"]), (1, "FAIL"))
        self.assertIn("1 of 1 check failed: 8B: " + UNUSED, ran.out)
        self.assertNotIn("connections; NCCL_NET_GDR_LEVEL", r["message"])     # the note's other parts

    def test_fewer_gdr_connections_without_a_note_still_fail(self):
        ran, r = self.judge(row(gdr="12/16"))
        self.assertEqual(r["verdict"], "FAIL")
        self.assertIn("GDRDMA on 12 of 16 network connections (NET/IB)", r["message"])

    def test_no_network_connection_is_nothing_to_judge(self):
        ran, r = self.judge(row(gdr="0/0", transport="P2P"))
        self.assertEqual(r["verdict"], "FAIL")
        self.assertIn("8B: no network connection: nothing to judge (ranks on one node? use --nccl-net-only)",
                      r["message"])

    def test_unknown_transport_fails_with_the_notes_reason(self):
        ran, r = self.judge(row(gdr="", transport="unknown", note=UNKNOWN + "; NCCL_DEBUG=INFO"))
        self.assertEqual(r["verdict"], "FAIL")
        self.assertIn("8B: " + UNKNOWN, r["message"])
        self.assertNotIn("NCCL_DEBUG", r["message"])

    def test_a_row_not_measured_fails(self):
        ran, r = self.judge(row(status="failed", gdr="", transport="", note="gdrb-sweep: exited 1"))
        self.assertIn("status failed (gdrb-sweep: exited 1)", r["message"])

    def test_a_value_that_is_not_g_of_n_is_invalid(self):
        for bad in ("17/16", "x/16", "16", "1/-16", "1/2/3", "1/ 2"):
            with self.subTest(value=bad):
                ran, r = self.judge(row(gdr=bad))
                self.assertEqual((ran.status, r["verdict"]), (3, "INVALID"), ran.out)
                self.assertIn("gdr_connections '%s' is not G/N" % bad, ran.out)

    def test_a_g_of_n_says_why_it_is_not_one(self):
        for bad, why in (("17/16", "G above N"), ("1/-16", "N is negative"),
                         ("1/", "N is empty"), ("nan/16", "G is not finite"), ("1/1000000000", "N is beyond 999999999"),
                         ("1.5/2", "G is not a non-negative integer")):
            with self.subTest(value=bad):
                ran, r = self.judge(row(gdr=bad))
                self.assertEqual((ran.status, r["verdict"]), (3, "INVALID"), ran.out)
                self.assertIn("gdr_connections '%s' is not G/N (connections with GPUDirect RDMA of all, G at most N): "
                              "%s" % (bad, why), ran.out)

    def test_path_may_be_given(self):
        ran, r = self.judge(row(path="staged", gdr="0/16"),
                            rule="rule used nccl_allreduce gdr_connections all path=staged")
        self.assertEqual(r["verdict"], "FAIL")

    def test_malformed_forms_are_refused_in_one_line(self):
        for rule, why in (
                ("rule r nccl_allreduce gdr_connections all 16/16", "expected 'gdr_connections all' and no threshold"),
                ("rule r nccl_allreduce gdr_connections all of staged", "no threshold"),
                ("rule r nccl_allreduce transport all", "'all' judges gdr_connections"),
                ("rule r nccl_allreduce busbw_GBps all", "'all' judges gdr_connections"),
                ("rule r nccl_allreduce gdr_connections every x", "unknown operator 'every'"),
                ("rule r nccl_allreduce gdr_connections", "rule needs NAME BENCH COLUMN OP THRESHOLD"),
                ("rule r nccl_allreduce gdr_connections all layer=CUDA", "layer=: expected a comma list of lower-case names")):
            with self.subTest(rule=rule):
                ran = self.accept(self.results(row()), self.nccl_profile(rule))
                self.assertEqual(ran.status, 2, ran.out)
                self.assertEqual(len(ran.err.splitlines()), 1, ran.err)
                self.assertIn(why, ran.err)
                self.assertNotIn("Traceback", ran.err)


class Simulated(NcclCase):
    def test_simulated_nccl_is_never_a_pass(self):
        ran, r = self.judge(row(library=LIB + " (simulated)"))
        self.assertEqual(r["verdict"], "PASS")
        self.assertEqual((ran.status, ran.verdict()["verdict"]), (1, "SIMULATED"))
        self.assertRegex(ran.out, r"\nSIMULATED: 1 rules, .*measured on NCCL 2\.28\.9 \(simulated\), which proves")
        self.assertEqual(ran.junit().find(".//failure").get("type"), "simulated")

    def test_simulated_gpu_and_nccl_both_named(self):
        sim = row(library=LIB + " (simulated)").replace("NVIDIA H100 80GB HBM3", "gdrbench simulated GPU (simgpu)")
        ran, _ = self.judge(sim, sim)
        self.assertIn("measured on gdrbench simulated GPU (simgpu) and NCCL 2.28.9 (simulated), which", ran.out)

    def test_a_real_library_passes(self):
        ran, _ = self.judge(row())
        self.assertEqual(ran.verdict()["verdict"], "PASS")

    def test_a_test_hook_is_never_judged(self):
        ran, _ = self.judge(row(note="test hook GDRB_INJECT_CORRUPTION=1"))
        self.assertEqual((ran.status, ran.verdict()["verdict"]), (3, "INVALID"))


class Pairing(NcclCase):
    """The rows of the launch with GPUDirect (direct) and of the one without (staged) pair by
    size, as one MPI or verbs run's direct and staged rows do."""
    BUSBW = "rule bw nccl_allreduce busbw_GBps >= 130% of staged sizes=256M:"
    LAT = "rule lat nccl_allreduce lat_avg_us <= 50% of staged sizes=8:8K"

    def two_launches(self, direct_bw, staged_bw, direct_lat, staged_lat):
        sizes = (8, 8192, 256 << 20, 1 << 30)
        on = [row(size=s, busbw=direct_bw, lat=direct_lat) for s in sizes]
        off = [row(path="staged", size=s, gdr="0/16", busbw=staged_bw, lat=staged_lat) for s in sizes]
        return self.results(*(on + off))        # first the launch with GPUDirect, then the one without

    def test_gdr_that_pays_passes(self):
        ran = self.accept(self.two_launches("40.0", "25.0", "10.0", "25.0"), self.nccl_profile(self.BUSBW, self.LAT))
        self.assertEqual(ran.status, 0, ran.out)
        bw, lat = ran.verdict()["rules"]
        self.assertEqual((bw["checked"], lat["checked"]), (2, 2), ran.out)
        self.assertIn("worst 40.00 GB/s against 32.50 GB/s (130% of staged) at 256MiB", bw["message"])

    def test_gdr_that_does_not_pay_fails(self):
        ran = self.accept(self.two_launches("30.0", "25.0", "15.0", "25.0"), self.nccl_profile(self.BUSBW, self.LAT))
        self.assertEqual(ran.status, 1, ran.out)
        bw, lat = ran.verdict()["rules"]
        self.assertEqual((bw["verdict"], lat["verdict"]), ("FAIL", "FAIL"))
        self.assertIn("256MiB: direct 30.00 GB/s < 32.50 GB/s (130% of staged 25.00 GB/s)", bw["message"])
        self.assertIn("8B: direct 15.00 us > 12.50 us (50% of staged 25.00 us)", lat["message"])

    def test_a_missing_staged_launch_fails(self):
        ran = self.accept(self.results(row(size=256 << 20, busbw="40.0")), self.nccl_profile(self.BUSBW))
        self.assertIn("256MiB: no staged row at this size", ran.verdict()["rules"][0]["message"])

    def test_the_report_pairs_them_and_lists_the_transport(self):
        res = report.read_results(os.path.join(self.two_launches("40.0", "25.0", "10.0", "25.0"), "results.csv"))
        (g,) = res.groups
        self.assertEqual((g.bench, sorted(g.paths), g.has_busbw), ("nccl_allreduce", ["direct", "staged"], True))
        self.assertEqual([(t.path, t.gdr, t.first, t.last, t.count, t.carried()) for t in res.transports], [
            ("direct", "16/16", 8, 1 << 30, 4, "yes, every network connection"),
            ("staged", "0/16", 8, 1 << 30, 4, "no, as asked (GPUDirect off: staged through host memory)")])


class InPlace(NcclCase):
    """--in-place both writes an out-of-place and an in-place row per size: a direct row is
    compared with the staged row of its own placement only, whatever order the launches wrote
    them in; a version 2 file (no placement) pairs as it always did."""
    BUSBW = "rule bw nccl_allreduce busbw_GBps >= 130% of staged sizes=256M:"
    SIZE = 256 << 20

    def launches(self):
        """GPUDirect on with --in-place both; off twice, with --in-place, then without: across
        placements the rows would pair 50 with 10 and 14 with 35 (a failure)."""
        return self.results(row(size=self.SIZE, busbw="50.0"), row(size=self.SIZE, busbw="14.0", placement="in-place"),
                            row(path="staged", size=self.SIZE, gdr="0/16", busbw="10.0", placement="in-place"),
                            row(path="staged", size=self.SIZE, gdr="0/16", busbw="35.0"))

    def test_in_place_rows_pair_only_with_in_place_rows(self):
        ran = self.accept(self.launches(), self.nccl_profile(self.BUSBW))
        bw = ran.verdict()["rules"][0]
        self.assertEqual((ran.status, bw["verdict"], bw["checked"]), (0, "PASS", 2), ran.out)
        self.assertIn("worst 14.00 GB/s against 13.00 GB/s (130% of staged) at 256MiB", bw["message"])

    def test_placement_selects_rows(self):
        for placement, worst in (("in-place", "14.00 GB/s against 13.00"), ("out-of-place", "50.00 GB/s against 45.50")):
            with self.subTest(placement=placement):
                ran = self.accept(self.launches(), self.nccl_profile(self.BUSBW + " placement=" + placement))
                bw = ran.verdict()["rules"][0]
                self.assertEqual((bw["verdict"], bw["checked"]), ("PASS", 1), ran.out)
                self.assertIn("worst %s GB/s" % worst, bw["message"])
                self.assertIn("placement=" + placement, ran.out)
        ran = self.accept(self.launches(), self.nccl_profile(self.BUSBW + " placement=inplace"))
        self.assertEqual(ran.status, 2, ran.out)
        self.assertRegex(ran.err, r"^gdrb-accept: .*\.profile:3: placement=: unknown value 'inplace'; "
                                  r"accepted: out-of-place,in-place\n$")

    def test_a_version_2_file_pairs_as_before(self):
        v2 = self.results(row(size=self.SIZE, busbw="40.0"), row(path="staged", size=self.SIZE, gdr="0/16", busbw="25.0"),
                          version=2)
        with open(os.path.join(v2, "results.csv"), encoding="utf-8") as f:
            self.assertEqual(common.schema().versions[f.readline().rstrip("\n")], 2)
        ran = self.accept(v2, self.nccl_profile(self.BUSBW))
        bw = ran.verdict()["rules"][0]
        self.assertEqual((ran.status, bw["verdict"], bw["checked"]), (0, "PASS", 1), ran.out)
        # No row of a version 2 file has a placement to select.
        ran = self.accept(v2, self.nccl_profile(self.BUSBW + " placement=in-place"))
        self.assertEqual(ran.verdict()["rules"][0]["verdict"], "NODATA", ran.out)

    def test_the_report_and_the_figures_keep_in_place_rows_apart(self):
        csv = os.path.join(self.launches(), "results.csv")
        res = report.read_results(csv)
        self.assertEqual([(g.in_place, {p: g.points[p, self.SIZE].busbw for p in sorted(g.paths)}) for g in res.groups],
                         [(False, {"direct": "50.0", "staged": "35.0"}), (True, {"direct": "14.0", "staged": "10.0"})])
        data = plot.read_data(csv)
        self.assertEqual(sorted(data.groups), [("nccl_allreduce", "device", False), ("nccl_allreduce", "device", True)])
        self.assertEqual([f.base for f in plot.figures(data, plot.Meta())],
                         ["nccl_allreduce-device", "nccl_allreduce-device-in-place"])


class RunLines(unittest.TestCase):
    def load(self, text):
        path = os.path.join(self.work, "p.profile")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return profile.load(path)

    def setUp(self):
        import tempfile
        import shutil
        self.work = tempfile.mkdtemp(prefix="gdrb-nccl-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def test_layer_memory_and_path_follow_the_binary_and_nccl_gdr(self):
        p = self.load("run gdrb_nccl_allreduce args=--nccl-gdr=on\n"
                      "run gdrb_nccl_allreduce args=\"--nccl-gdr off --nccl-net-only\"\n"
                      "run gdrb_nccl_alltoall mem=pinned\n"
                      "rule r nccl_allreduce lat_avg_us <= 50% of staged layer=nccl\n")
        # The layer, the default kind and the path are the binary's (--describe), asked by the plan.
        self.assertEqual([(r.layer, r.mems, r.paths) for r in p.runs], [("", "", ""), ("", "", ""), ("", "pinned", "")])

    def test_bad_nccl_run_lines_are_refused(self):
        for line, why in (("run gdrb_nccl_allreduce mem=host", "NCCL refuses pageable host memory"),
                          ("run gdrb_nccl_allreduce args=--nccl-gdr=both", "give two run lines"),
                          ("run gdrb_nccl_allreduce args=--nccl-gdr=yes", "--nccl-gdr: expected auto, on or off"),
                          ("run gdrb_nccl_allreduce launch=local", "launch=local does not apply"),
                          ("run gdrb_nccl_allreduce np=1", "at least 2 ranks"),
                          ("run gdrb_mpi_bw args=--nccl-gdr=off", "--nccl-gdr applies to the NCCL binaries"),
                          ("run gdrb_mpi_bw layer=CUDA", "layer=: expected a comma list of lower-case names")):
            with self.subTest(line=line):
                with self.assertRaises(common.Stop) as cm:
                    self.load(line + "\n")
                self.assertEqual(cm.exception.status, 2)
                self.assertIn(why, str(cm.exception))

    def test_the_shipped_profile_parses(self):
        p = profile.load(str(gdrbtest.SCRIPTS / "profiles" / "nccl-gdr.profile"))
        self.assertEqual([r.binary for r in p.runs], ["gdrb_nccl_allreduce", "gdrb_nccl_allreduce",
                                                      "gdrb_nccl_alltoall", "gdrb_nccl_alltoall"])
        # Each line's path is the binary's with the line's --nccl-gdr (its --describe), where it is built.
        built = [str(gdrbtest.BUILD / "nccl" / r.binary) for r in p.runs]
        if all(os.access(b, os.X_OK) for b in built):
            from gdrbtool import facts
            paths = [[x.path for x in facts.describe(b, ["--mem", "device"] + r.args.split()).kind("device").paths]
                     for b, r in zip(built, p.runs)]
            self.assertEqual(paths, [["direct"], ["staged"], ["direct"], ["staged"]])
        self.assertEqual([(r.name, r.kind) for r in p.rules], [
            ("nccl-gdr-used", "gdr"), ("nccl-a2a-gdr-used", "gdr"), ("nccl-gdr-busbw", "predicted"),
            ("nccl-gdr-latency", "predicted")])
        self.assertEqual(p.rules[2].filters["sizes"], "268435456:inf")
        self.assertEqual(p.rules[3].column, "lat_avg_us")
        # The seeds' +30% and -50% are printed beside the measured ratios, never judged.
        self.assertEqual([(r.tolerance, r.reference) for r in p.rules[2:]], [(10.0, 130.0), (10.0, 50.0)])


if __name__ == "__main__":
    unittest.main()
