"""The GPUDirect verdict on evidence (docs/nccl.md, "What GPUDirect should be worth here"):
GDRDMA missing where NCCL would use it fails, where NCCL declines it (a far NIC under its
default level, the sends of a GPU before Ampere) it does not; direct/staged busbw is judged
against what the doctor's topology predicts (a wire-limited node passes at 1.0, a shared-switch
node with a low ratio fails), never passing without the evidence for the prediction; latency
is judged "not above staged", the seeds' -50% and +30% printed as references only."""
import json
import os
import subprocess
import unittest

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtest import BUILD
from gdrbtool import gdr_model
from test_nccl import NcclCase, row

GEN5 = {"gts": 32.0, "width": 16}
GEN4 = {"gts": 16.0, "width": 16}
V100 = "Tesla V100-SXM2-32GB"
BIG = 256 << 20


def doctor(dist="PIX", rate="400 Gb/sec (4X NDR)", gpu_link=GEN5, nic_link=GEN5, uplink=GEN5, gpus=1, dists=None,
           cc=None):
    """A gdrb_doctor --json report: GPUS GPUs at DIST (or DISTS) from NIC mlx5_I; None drops a link;
    CC each GPU's compute capability (None: not recorded)."""
    g = []
    for i in range(gpus):
        d = {"pci": "0000:%02x:00.0" % (0x13 + i), "numa_node": 0, "driver": "nvidia", "bar1_bytes": 1 << 37,
             "bar1_region": 2, "nearest_nic": "mlx5_%d" % i, "distance": (dists or [dist] * gpus)[i]}
        if gpu_link:
            d["link"] = gpu_link
        if uplink:
            d["shared_uplink"] = uplink
        if cc is not None:
            d["compute_capability"] = cc
        g.append(d)
    nics = []
    for i in range(gpus):
        n = {"name": "mlx5_%d" % i, "pci": "0000:%02x:00.0" % (0x20 + i), "numa_node": 0,
             "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "InfiniBand", "rate": rate, "netdev": None,
                        "roce_v2_gid_index": -1}]}
        if nic_link:
            n["link"] = nic_link
        nics.append(n)
    return {"tool": "gdrb_doctor", "host": "node1", "verdict": "PASS", "checks": [],
            "topology": {"gpus": g, "nics": nics}}


class Case(NcclCase):
    def results_with(self, report, *rows):
        d = self.results(*rows)
        if report is not None:
            with open(os.path.join(d, "doctor.json"), "w", encoding="utf-8") as f:
                f.write(report if isinstance(report, str) else json.dumps(report))
        return d

    def rule(self, report, rule, *rows):
        ran = self.accept(self.results_with(report, *rows), self.nccl_profile(rule))
        return ran, ran.verdict()["rules"][0]


class GdrWhereNcclUsesIt(Case):
    """(a) gdr_connections all: missing GDRDMA fails only where NCCL would have used it."""
    RULE = "rule used nccl_allreduce gdr_connections all"

    def test_missing_on_a_near_nic_fails(self):
        ran, r = self.rule(doctor("PIX"), self.RULE, row(gdr="0/16"))
        self.assertEqual((ran.status, r["verdict"]), (1, "FAIL"), ran.out)
        self.assertIn("8B: GDRDMA on 0 of 16 network connections (NET/IB); NCCL would use GPUDirect here: GPU-NIC distance PIX within "
                      "NCCL_NET_GDR_LEVEL PXB (NCCL's default); NVIDIA H100 80GB HBM3 is Ampere or later", r["message"])

    def test_a_far_nic_under_nccls_default_does_not_fail(self):
        for dist in ("PHB", "NODE", "SYS"):
            with self.subTest(dist=dist):
                ran, r = self.rule(doctor(dist), self.RULE, row(gdr="0/16"))
                self.assertEqual((ran.status, r["verdict"]), (0, "PASS"), ran.out)
                self.assertIn("NCCL declines GPUDirect here: GPU-NIC distance %s is beyond NCCL_NET_GDR_LEVEL PXB "
                              "(NCCL's default)" % dist, r["message"])

    def test_a_far_nic_with_gdr_forced_on_fails(self):
        # --nccl-gdr=on: NCCL_NET_GDR_LEVEL=SYS in the note; the numeric form as NCCL maps it.
        for env in ("NCCL_NET_GDR_LEVEL=SYS", "NCCL_NET_GDR_LEVEL=4"):
            with self.subTest(env=env):
                ran, r = self.rule(doctor("SYS"), self.RULE, row(gdr="0/16", note="NCCL_DEBUG=INFO " + env))
                self.assertEqual(r["verdict"], "FAIL", ran.out)
                self.assertIn("GPU-NIC distance SYS within " + env, r["message"])

    def test_the_rows_distance_comes_before_the_doctors(self):
        ran, r = self.rule(doctor("PIX"), self.RULE, self.dist_row("SYS"))
        self.assertEqual(r["verdict"], "PASS", ran.out)

    def dist_row(self, dist):
        from gdrbtool import common
        f = common.csv_split(row(gdr="0/16"))
        f[common.schema().index["gpu_nic_dist"]] = dist
        return ",".join(common.csv_text(x) for x in f)

    def test_sends_of_a_gpu_before_ampere_may_lack_it(self):
        pre = row(gdr="8/16").replace("NVIDIA H100 80GB HBM3", V100)
        ran, r = self.rule(doctor("PIX"), self.RULE, pre)
        self.assertEqual(r["verdict"], "PASS", ran.out)
        self.assertIn("%s is pre-Ampere: NCCL declines GPUDirect on sends unless NVLink joins its GPUs" % V100,
                      r["message"])
        # The receives must still have it; and Ampere or later gets no such leave.
        ran, r = self.rule(doctor("PIX"), self.RULE, row(gdr="4/16").replace("NVIDIA H100 80GB HBM3", V100))
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        ran, r = self.rule(doctor("PIX"), self.RULE, row(gdr="8/16"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        # NCCL_NET_GDR_READ=0 turns the sends' GPUDirect off on any GPU.
        ran, r = self.rule(doctor("PIX"), self.RULE, row(gdr="8/16", note="NCCL_NET_GDR_READ=0"))
        self.assertEqual(r["verdict"], "PASS", ran.out)

    def test_the_doctors_compute_capability_gives_the_generation(self):
        # A name that says no generation (the simulated GPU's): CUDA's compute capability does.
        sim = "gdrbench simulated GPU (simgpu)"
        half = row(gdr="8/16").replace("NVIDIA H100 80GB HBM3", sim)
        ran, r = self.rule(doctor("PIX", cc="7.0"), self.RULE, half)
        self.assertEqual(r["verdict"], "PASS", ran.out)
        self.assertIn("%s (compute capability 7.0) is pre-Ampere: NCCL declines GPUDirect on sends" % sim, r["message"])
        ran, r = self.rule(doctor("PIX", cc="9.0"), self.RULE, half)
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        self.assertIn("%s (compute capability 9.0) is Ampere or later" % sim, r["message"])
        # It comes before the name; null, a malformed value or GPUs of two generations leave the name.
        ran, r = self.rule(doctor("PIX", cc="7.0"), self.RULE, row(gdr="8/16"))
        self.assertEqual(r["verdict"], "PASS", ran.out)
        null = doctor("PIX")
        null["topology"]["gpus"][0]["compute_capability"] = None
        for report in (null, doctor("PIX", cc="9"), doctor("PIX", cc="nine")):
            with self.subTest(cc=report["topology"]["gpus"][0].get("compute_capability")):
                ran, r = self.rule(report, self.RULE, half)
                self.assertEqual(r["verdict"], "FAIL", ran.out)
                self.assertIn("the GPU's generation is not known from '%s'" % sim, r["message"])
        mixed = doctor("PIX", gpus=2, dists=["PIX", "PIX"], cc="7.5")
        mixed["topology"]["gpus"][1]["compute_capability"] = "8.0"
        ran, r = self.rule(mixed, self.RULE, half)
        self.assertIn("the GPU's generation is not known", r["message"])

    def test_without_the_distance_a_shortfall_fails(self):
        for report, why in ((None, "no doctor.json in the results"),
                            (doctor(gpus=2, dists=["PIX", "SYS"]), "GPUs sit at different distances from their "
                                                                   "NICs (PIX, SYS)"),
                            ({"tool": "gdrb_doctor_mpi", "nodes": []}, "has no topology")):
            with self.subTest(why=why):
                ran, r = self.rule(report, self.RULE, row(gdr="0/16"))
                self.assertEqual(r["verdict"], "FAIL", ran.out)
                self.assertIn("whether NCCL declines GPUDirect at this GPU-NIC distance is not known", r["message"])
                self.assertIn(why, r["message"])
                ran, r = self.rule(report, self.RULE, row(gdr="16/16"))
                self.assertEqual(r["verdict"], "PASS", ran.out)

    def test_an_unreadable_doctor_is_invalid(self):
        ran, r = self.rule("{not json", self.RULE, row(gdr="0/16"))
        self.assertEqual((ran.status, ran.verdict()["verdict"]), (3, "INVALID"), ran.out)
        self.assertIn("doctor.json could not be read", ran.out)


class BusbwAgainstTheTopology(Case):
    """(b) busbw_GBps >= predicted of staged."""
    RULE = "rule bw nccl_allreduce busbw_GBps >= predicted of staged sizes=256M: reference=130%"
    OLD = "rule bw nccl_allreduce busbw_GBps >= 130% of staged sizes=256M:"

    def launches(self, direct, staged):
        return (row(size=BIG, busbw=direct), row(path="staged", size=BIG, gdr="0/16", busbw=staged))

    def test_a_wire_limited_node_passes_at_one(self):
        # 200 Gb/s (25 GB/s) under a switch whose Gen5 x16 uplink carries 2 x 25 GB/s: staging
        # reaches the wire too. The seeds' +30% failed this healthy node.
        report = doctor("PIX", rate="200 Gb/sec (4X HDR)")
        ran, r = self.rule(report, self.RULE, *self.launches("23.5", "23.4"))
        self.assertEqual((ran.status, r["verdict"]), (0, "PASS"), ran.out)
        self.assertIn("predicted 1.00", r["message"])
        self.assertIn("reference 1.30 (130% of staged, not judged): 1 of 1 below it", r["message"])
        ran, r = self.rule(report, self.OLD, *self.launches("23.5", "23.4"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)

    def test_a_shared_switch_with_a_low_ratio_fails(self):
        # 400 Gb/s (50 GB/s) under a switch whose Gen5 x16 uplink (56.7 GB/s) staging crosses
        # twice each way: staged at most 28.4 GB/s, direct/staged predicted 1.76.
        p = gdr_model.predict_busbw(gdr_model.topology(gdrbtest_json(doctor("PIX"))), 0)
        self.assertAlmostEqual(p.ratio, 50 / (32 * 128 / 130 * 16 / 8 * 0.9 / 2), places=6)
        ran, r = self.rule(doctor("PIX"), self.RULE, *self.launches("32.0", "27.0"))
        self.assertEqual((ran.status, r["verdict"]), (1, "FAIL"), ran.out)
        self.assertIn("256MiB: direct/staged 1.19 < 1.59 (direct 32.00 GB/s, staged 27.00 GB/s)", r["message"])
        ran, r = self.rule(doctor("PIX"), self.RULE, *self.launches("46.0", "27.0"))
        self.assertEqual(r["verdict"], "PASS", ran.out)
        # A narrower uplink predicts more: Gen4 x16 leaves staging 14.2 GB/s.
        ran, r = self.rule(doctor("PIX", uplink=GEN4), self.RULE, *self.launches("46.0", "27.0"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)

    def test_no_shared_link_predicts_one(self):
        ran, r = self.rule(doctor("PHB", gpu_link=None, nic_link=None, uplink=None), self.RULE,
                           *self.launches("24.0", "25.0"))
        self.assertEqual(r["verdict"], "PASS", ran.out)
        ran, r = self.rule(doctor("SYS"), self.RULE, *self.launches("20.0", "25.0"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        self.assertIn("direct/staged 0.80 < 0.90", r["message"])

    def test_missing_evidence_is_never_a_pass(self):
        for report, why in ((None, "no doctor.json in the results"),
                            (doctor("PIX", uplink=None), "the PCIe uplink GPU and NIC share not recorded"),
                            (doctor("PIX", nic_link=None), "the NIC's PCIe link not recorded"),
                            (doctor("PIX", rate="unknown"), "the NIC's line rate not recorded"),
                            (doctor("unknown"), "no GPU-NIC distance"),
                            ({"tool": "gdrb_doctor_mpi", "nodes": []}, "has no topology")):
            with self.subTest(why=why):
                ran, r = self.rule(report, self.RULE, *self.launches("46.0", "27.0"))
                self.assertEqual((ran.status, r["verdict"]), (1, "NODATA"), ran.out)
                self.assertIn("no prediction from the node's topology: ", r["message"])
                self.assertIn(why, r["message"])
                self.assertIn("measured direct/staged 1.70..1.70 at 1 size", r["message"])
        ran, r = self.rule("[1,", self.RULE, *self.launches("46.0", "27.0"))
        self.assertEqual((ran.status, ran.verdict()["verdict"]), (3, "INVALID"), ran.out)

    def test_link_rate_option_gives_the_wire(self):
        ran = self.accept("--link-rate", "200", self.results_with(doctor("PIX"), *self.launches("23.5", "23.4")),
                          self.nccl_profile(self.RULE))
        self.assertEqual(ran.verdict()["rules"][0]["verdict"], "PASS", ran.out)


class DoctorEndToEnd(Case):
    """gdrb accept with the shipped nccl-gdr profile on what the built gdrb_doctor --json says of
    a fixture tree where GPU and NIC share a PCIe switch: the busbw rule judges (it had no data
    while the doctor recorded no PCIe link)."""
    BUSBW = "nccl-gdr-busbw"

    def report(self, fixture):
        doctor_bin, tree = BUILD / "bench" / "gdrb_doctor", BUILD / "tests" / "fixtures" / fixture
        if not doctor_bin.is_file() or not (tree / "sys").is_dir():
            self.skipTest("gdrb_doctor or the fixture trees not built (make check builds both)")
        ran = subprocess.run([str(doctor_bin), "--json", "--sysfs-root", str(tree / "sys"), "--procfs-root",
                              str(tree / "proc")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, check=False)
        self.assertIn(ran.returncode, (0, 1), ran.stderr)
        return ran.stdout

    def busbw(self, fixture, direct, staged):
        rows = (row(size=BIG, busbw=direct), row(path="staged", size=BIG, gdr="0/16", busbw=staged))
        ran = self.accept(self.results_with(self.report(fixture), *rows), "nccl-gdr")
        rule = next(r for r in ran.verdict()["rules"] if r["name"] == self.BUSBW)
        return ran, rule

    def test_a_shared_switch_is_judged_against_its_links(self):
        # healthy: 400 Gb/s NICs (50 GB/s) and GPUs under one switch, every link Gen5 x16
        # (56.7 GB/s of data): staged at most 28.4 GB/s, direct/staged 1.76, 1.59 with 10% off.
        ran, r = self.busbw("healthy", "46.0", "27.0")
        self.assertEqual(r["verdict"], "PASS", ran.out)
        self.assertIn("GPU 0000:13:00.0 PIX to mlx5_0: wire 50.00 GB/s, GPU 32.00 GT/s x16, NIC 32.00 GT/s x16, "
                      "shared uplink 32.00 GT/s x16: staged 28.36 of direct 50.00 GB/s", r["message"])
        ran, r = self.busbw("healthy", "32.0", "27.0")
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        self.assertIn("256MiB: direct/staged 1.19 < 1.59", r["message"])

    def test_a_down_trained_uplink_predicts_more(self):
        # uplink-x8: the same node, its switch's uplink at x8: staged at most 14.2 GB/s, 3.53.
        ran, r = self.busbw("uplink-x8", "46.0", "27.0")
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        self.assertIn("shared uplink 32.00 GT/s x8: staged 14.18 of direct 50.00 GB/s", r["message"])
        self.assertIn("direct/staged 1.70 < 3.17", r["message"])
        ran, r = self.busbw("uplink-x8", "46.0", "13.0")
        self.assertEqual(r["verdict"], "PASS", ran.out)

    def test_no_shared_switch_predicts_one(self):
        ran, r = self.busbw("phb", "25.0", "25.0")
        self.assertEqual(r["verdict"], "PASS", ran.out)
        self.assertIn("predicted 1.00", r["message"])


class LatencyNotAboveStaged(Case):
    """(c) lat_avg_us <= predicted of staged: not slower with GPUDirect; -50% a reference."""
    RULE = "rule lat nccl_allreduce lat_avg_us <= predicted of staged sizes=8:8K reference=50%"
    OLD = "rule lat nccl_allreduce lat_avg_us <= 50% of staged sizes=8:8K"

    def launches(self, direct, staged):
        return (row(size=8, lat=direct), row(path="staged", size=8, gdr="0/16", lat=staged))

    def test_a_healthy_cluster_passes(self):
        # LL keeps send buffers in host memory: GPUDirect wins a little, never half.
        ran, r = self.rule(None, self.RULE, *self.launches("9.0", "10.0"))
        self.assertEqual((ran.status, r["verdict"]), (0, "PASS"), ran.out)
        self.assertIn("reference 0.50 (50% of staged, not judged): 1 of 1 above it", r["message"])
        ran, r = self.rule(None, self.OLD, *self.launches("9.0", "10.0"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)

    def test_slower_with_gpudirect_fails(self):
        ran, r = self.rule(None, self.RULE, *self.launches("12.0", "10.0"))
        self.assertEqual(r["verdict"], "FAIL", ran.out)
        self.assertIn("8B: direct/staged 1.20 > 1.10 (direct 12.00 us, staged 10.00 us)", r["message"])


class Forms(Case):
    def test_malformed_forms_are_refused_in_one_line(self):
        for rule, why in (
                ("rule r nccl_allreduce busbw_GBps >= predicted of link", "expected 'predicted of staged'"),
                ("rule r nccl_allreduce busbw_GBps <= predicted of staged", "judges busbw_GBps >="),
                ("rule r nccl_allreduce algbw_GBps >= predicted of staged", "judges busbw_GBps >="),
                ("rule r nccl_allreduce lat_avg_us >= predicted of staged", "judges busbw_GBps >="),
                ("rule r nccl_allreduce busbw_GBps >= predicted of staged path=direct", "drop path="),
                ("rule r nccl_allreduce busbw_GBps >= predicted of staged tolerance=100%", "below 100%"),
                ("rule r nccl_allreduce busbw_GBps >= predicted of staged tolerance=5", "expected a percentage"),
                ("rule r nccl_allreduce busbw_GBps >= predicted of staged reference=0%", "above 0%"),
                ("rule r nccl_allreduce busbw_GBps >= 130% of staged reference=130%",
                 "reference= applies to 'predicted of staged' only")):
            with self.subTest(rule=rule):
                ran = self.accept(self.results(row()), self.nccl_profile(rule))
                self.assertEqual(ran.status, 2, ran.out)
                self.assertEqual(len(ran.err.splitlines()), 1, ran.err)
                self.assertIn(why, ran.err)


def gdrbtest_json(obj):
    from gdrbtool.common import Json
    return Json.parse(json.dumps(obj))


class Model(unittest.TestCase):
    def test_generations(self):
        for name, gen in (("Tesla V100-SXM2-32GB", "pre-Ampere"), ("Tesla T4", "pre-Ampere"),
                          ("Quadro RTX 8000", "pre-Ampere"), ("NVIDIA A100-SXM4-80GB", "Ampere or later"),
                          ("NVIDIA H200", "Ampere or later"), ("NVIDIA RTX A6000", "Ampere or later"),
                          ("gdrbench simulated GPU (simgpu)", "")):
            with self.subTest(name=name):
                self.assertEqual(gdr_model.generation(name), gen)

    def test_levels_as_nccl_reads_them(self):
        for note, level in (("", 5), ("NCCL_NET_GDR_LEVEL=PHB", 8), ("NCCL_NET_GDR_LEVEL=2", 5),
                            ("NCCL_NET_GDR_LEVEL=9", 9), ("NCCL_NET_GDR_LEVEL=phb", 5), ("NCCL_NET_GDR_LEVEL=LOC", 0)):
            with self.subTest(note=note):
                self.assertEqual(gdr_model.gdr_level(note)[0], level)


if __name__ == "__main__":
    unittest.main()
