"""Node profiles per SKU (docs/skus.md): every shipped hgx-* profile parses and every rule names
its source; a rule without one is refused in a profile that says "sources required"; gdrb
inventory passes an HGX H200 doctor report and fails a GPU down-trained, a GPU or a NIC gone, a
NIC below its rate, a GPU with an NVLink down or NVLink state not known, naming the part; an unknown SKU is exit 2; gdrb accept with a SKU profile
passes good figures and fails one below its floor."""
import contextlib
import copy
import io
import json
import os
import shutil
import tempfile
import unittest

import gdrbtest
from gdrbtool import cli, common, inventory, profile

SKUS = ("a100", "h100", "h200", "b200")


def run(*argv):
    """gdrb ARGV in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv), "")
    return status, out.getvalue(), err.getvalue()


def h200_doctor():
    """The doctor's topology of an HGX H200 node as gdrb_doctor --json writes it (numbers as
    text, as the tool reads them): 8 GPUs 0x2335 and 8 NDR NICs, all Gen5 x16."""
    link = {"gts": "32", "width": "16"}
    gpus = [{"pci": "0000:%02x:00.0" % (0x13 + i), "device": "0x2335", "link": dict(link)} for i in range(8)]
    nics = [{"name": "mlx5_%d" % i, "pci": "0000:%02x:00.0" % (0x40 + i), "link": dict(link),
             "ports": [{"port": "1", "state": "ACTIVE", "rate": "400 Gb/sec (4X NDR)"}]} for i in range(8)]
    return {"topology": {"gpus": gpus, "nics": nics}}


class Profiles(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gdrb-sku-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def test_every_sku_profile_parses_and_every_rule_has_a_source(self):
        for name in SKUS:
            sku = inventory.SKUS[name]
            path = str(gdrbtest.SCRIPTS / "profiles" / (sku.profile + ".profile"))
            with open(path, encoding="utf-8") as f:
                self.assertIn("\nsources required\n", f.read(), path)
            prof = profile.load(path)
            self.assertGreaterEqual(len(prof.rules), 5, path)
            for rule in prof.rules:
                published = "https://" in rule.source and not rule.source.startswith("estimate:")
                self.assertTrue(published or rule.source.startswith("estimate: "), (path, rule.name, rule.source))

    def write(self, text):
        path = os.path.join(self.work, "p%d.profile" % len(os.listdir(self.work)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def refused(self, text, expect):
        path = self.write(text)
        with self.assertRaises(common.Stop) as cm:
            profile.load(path)
        self.assertEqual(cm.exception.status, 2)
        self.assertIn(expect % {"p": path}, cm.exception.message)
        return cm.exception.message

    def test_a_rule_without_source_is_refused(self):
        head = "sources required\nrun gdrb_mpi_bw\n"
        msg = self.refused(head + 'rule ok mpi_bw bw_GBps >= 1 GB/s source="estimate: a floor for this test"\n'
                           "rule bare mpi_bw bw_GBps >= 1 GB/s\n", "%(p)s:4: rule bare has no source=")
        self.assertEqual(len(msg.splitlines()), 1)
        # Without "sources required" the same rule is taken (the fabric profiles stay as they are).
        self.assertEqual(len(profile.load(self.write("run gdrb_mpi_bw\nrule bare mpi_bw bw_GBps >= 1 GB/s\n")).rules), 1)

    def test_a_source_must_be_an_address_or_an_estimate(self):
        head = "run gdrb_mpi_bw\n"
        for bad in ('source="Azure says so"', 'source="estimate:"', 'source="estimate: short"', "source="):
            self.refused(head + "rule r mpi_bw bw_GBps >= 1 GB/s " + bad + "\n", "%(p)s:2: rule r:")
        self.refused("sources required x\n", "%(p)s:1: expected 'sources required'")
        prof = profile.load(self.write(head + 'rule r mpi_bw bw_GBps >= 1 GB/s source="https://example.org/a (x)"\n'))
        self.assertEqual(prof.rules[0].source, "https://example.org/a (x)")


def with_nvlink(doctor, up=18, name="NVIDIA H200"):
    """DOCTOR with the "nvlink" report of gdrb_doctor --json on the live node: every GPU of its
    topology listed by NVML with UP of 18 links up."""
    gpus = [{"pci": g["pci"], "name": name, "links": 18, "up": up, "down": list(range(18 - up)),
             "not_read": [], "version": "4.0", "to_nvswitch": up, "to_gpu": 0, "error": None}
            for g in doctor["topology"]["gpus"]]
    doctor["nvlink"] = {"asked": True, "known": True, "why": None, "reported": len(gpus), "gpus": gpus}
    return doctor


class Inventory(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gdrb-inventory-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def inventory(self, doctor, sku="h200"):
        path = os.path.join(self.work, "doctor-%d.json" % len(os.listdir(self.work)))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doctor, f)
        return run("inventory", "--sku", sku, path)

    def differs(self, doctor, part, text):
        status, out, err = self.inventory(doctor)
        self.assertEqual(status, 1, out + err)
        self.assertRegex(out, r"(?m)^FAIL +%s +.*%s" % (part, text))
        self.assertIn("inventory h200: FAIL", out.splitlines()[-1])

    def test_healthy_h200_passes(self):
        status, out, err = self.inventory(h200_doctor())
        self.assertEqual((status, err), (0, ""), out)
        self.assertIn("PASS      gpus             8 GPUs of HGX H200 (H200 SXM 141GB), expected 8", out)
        self.assertIn("NOT KNOWN nvlink", out)
        self.assertEqual(out.splitlines()[-1], "inventory h200: PASS (HGX H200 as expected; NVLink not known)")

    def test_each_fault_is_named(self):
        d = h200_doctor()
        d["topology"]["gpus"][3]["link"]["width"] = "8"
        self.differs(d, r"gpu 0000:16:00\.0", r"PCIe Gen5 x8, expected x16: down-trained width")
        d = h200_doctor()
        del d["topology"]["gpus"][7]
        self.differs(d, "gpus", "7 GPUs of HGX H200")
        d = h200_doctor()
        del d["topology"]["nics"][2]
        self.differs(d, "nics", "7 RDMA NICs with a port ACTIVE at 400 Gb/s or more, expected 8")
        d = h200_doctor()
        d["topology"]["nics"][5]["ports"][0]["rate"] = "200 Gb/sec (4X HDR)"
        self.differs(d, "nics", r"below: mlx5_5 \(port 1 ACTIVE 200 Gb/sec \(4X HDR\)\)")
        d = h200_doctor()
        d["topology"]["nics"][1]["link"]["gts"] = "16"
        self.differs(d, "nic mlx5_1", "PCIe Gen4 x16, expected Gen5: below its speed")
        d = h200_doctor()
        d["topology"]["gpus"][0]["device"] = "0x2330"
        self.differs(d, r"gpu 0000:13:00\.0", "PCI device 0x2330, not a HGX H200 GPU")
        d = h200_doctor()
        d["topology"]["gpus"][1]["link"] = None
        self.differs(d, r"gpu 0000:14:00\.0", "PCIe link not known")

    def test_nvlinks_up_pass_and_a_link_down_is_named(self):
        status, out, err = self.inventory(with_nvlink(h200_doctor()))
        self.assertEqual((status, err), (0, ""), out)
        self.assertIn("PASS      nvlink           8 of 8 GPUs with 18 NVLinks up (NVML: NVIDIA H200)", out)
        self.assertEqual(out.splitlines()[-1], "inventory h200: PASS (HGX H200 as expected)")
        d = with_nvlink(h200_doctor())
        d["nvlink"]["gpus"][4].update(up=17, down=[5])
        self.differs(d, r"nvlink 0000:17:00\.0", r"17 of 18 NVLinks up \(down: 5\), expected 18$")
        self.differs(d, "nvlink", r"7 of 8 GPUs with 18 NVLinks up")
        status, out, _ = self.inventory(d)
        self.assertIn("nvlink 0000:17:00.0: 17 of 18 NVLinks up (down: 5), expected 18", out.splitlines()[-1])
        # Every link of a GPU down (NVML's view of a PCIe card without its bridge) differs too.
        d = with_nvlink(h200_doctor())
        d["nvlink"]["gpus"][0].update(up=0, down=list(range(18)))
        self.differs(d, r"nvlink 0000:13:00\.0", r"0 of 18 NVLinks up \(down: 0, 1, 2, .*17\), expected 18$")
        # The SKU's count, not 18 everywhere: an A100 board wires 12.
        d = h200_doctor()
        for g in d["topology"]["gpus"]:
            g["device"] = "0x20b2"
            g["link"]["gts"] = "16"
        for n in d["topology"]["nics"]:
            n["link"]["gts"] = "16"
            n["ports"][0]["rate"] = "200 Gb/sec (4X HDR)"
        d = with_nvlink(d, up=12, name="NVIDIA A100-SXM4-80GB")
        for g in d["nvlink"]["gpus"]:
            g.update(links=12, down=[])
        status, out, _ = self.inventory(d, "a100")
        self.assertEqual(status, 0, out)
        self.assertIn("8 of 8 GPUs with 12 NVLinks up (NVML: NVIDIA A100-SXM4-80GB)", out)
        status, out, _ = self.inventory(d, "h100")
        self.assertEqual(status, 1, out)

    def test_nvlink_not_known_is_never_a_match(self):
        # NVML absent on the live node: not known, and the inventory fails.
        d = h200_doctor()
        d["nvlink"] = {"asked": True, "known": False, "why": "libnvidia-ml.so.1 (NVML, part of the NVIDIA "
                       "driver) not loaded: not found", "reported": 0, "gpus": []}
        self.differs(d, "nvlink", r"NVLink state not known: libnvidia-ml\.so\.1 .*; expected 18 NVLinks up on each GPU")
        # A GPU of the topology that NVML does not list, or a count that is not a number.
        d = with_nvlink(h200_doctor())
        del d["nvlink"]["gpus"][6]
        self.differs(d, r"nvlink 0000:19:00\.0", "not known: NVML does not list this GPU; expected 18 NVLinks up")
        d = with_nvlink(h200_doctor())
        d["nvlink"]["gpus"][2]["up"] = "eighteen"
        self.differs(d, r"nvlink 0000:15:00\.0", "not known: NVML's link count not read")
        d = with_nvlink(h200_doctor())
        d["nvlink"]["gpus"][2]["up"] = 10 ** 30
        self.differs(d, r"nvlink 0000:15:00\.0", "not known: NVML's link count not read")
        # A fixture tree's report (NVML not asked): said, not judged, and the overall line says so.
        d = h200_doctor()
        d["nvlink"] = {"asked": False, "known": False, "why": "not asked: a fixture tree", "reported": 0, "gpus": []}
        status, out, _ = self.inventory(d)
        self.assertEqual(status, 0, out)
        self.assertRegex(out, r"(?m)^NOT KNOWN nvlink +NVML not asked: the doctor read a fixture tree")
        self.assertEqual(out.splitlines()[-1], "inventory h200: PASS (HGX H200 as expected; NVLink not known)")

    def test_an_idle_gpu_speed_is_a_note(self):
        d = h200_doctor()
        d["topology"]["gpus"][2]["link"]["gts"] = "2.5"
        status, out, _ = self.inventory(d)
        self.assertEqual(status, 0, out)
        self.assertRegex(out, r"(?m)^NOTE +gpu 0000:15:00\.0 +PCIe Gen1 x16, expected Gen5: an idle GPU")

    def test_another_sku_differs(self):
        status, out, _ = self.inventory(h200_doctor(), "h100")
        self.assertEqual(status, 1)
        self.assertIn("0 GPUs of HGX H100 (none), expected 8", out)

    def test_bad_input_is_one_line_exit_2(self):
        status, out, err = self.inventory(h200_doctor(), "h300")
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(err, "gdrb-inventory: --sku: unknown SKU 'h300'; known: a100, b200, h100, h200\n")
        for argv in (["--sku", "h200"], ["--sku", "h200", "--doctor", "x.json"], ["x.json"],
                     ["--sku", "h200", os.path.join(self.work, "none.json")], ["--color"]):
            status, out, err = run("inventory", *argv)
            self.assertEqual((status, out, len(err.splitlines())), (2, "", 1), (argv, err))
        status, out, err = self.inventory({"checks": []})
        self.assertEqual((status, len(err.splitlines())), (2, 1), err)
        self.assertIn("no topology.gpus", err)


class Accept(unittest.TestCase):
    """gdrb accept RESULTS hgx-h200 on rows of an H200 node: the figures at the floors pass, one
    below fails naming its rule."""

    FIGURES = {("copy_bw", "pinned", "h2d"): 55.0, ("copy_bw", "pinned", "d2h"): 54.0,
               ("copy_bw", "device", "d2d"): 1500.0}

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gdrb-sku-accept-test.")
        self.addCleanup(shutil.rmtree, self.work)

    def results(self, figures):
        cols = common.Schema().columns
        rows = []

        def row(**kv):
            base = {"layer": "local", "reg": "none", "pair": "all", "iterations": "10", "ranks": "1", "hosts": "1",
                    "gpu": "NVIDIA H200", "status": "ok", "errors": "0", "quality": "ok", "version": "0.1.0"}
            base.update(kv)
            rows.append(",".join(str(base.get(c, "")) for c in cols))
        for key, bw in figures.items():
            if isinstance(key, tuple) and key[0] != "p2p":
                bench, mem, path = key
                for size in (256 << 20, 512 << 20, 1 << 30):
                    row(benchmark=bench, mem=mem, path=path, size_bytes=size, bw_GBps="%.3f" % bw)
        # Every ordered pair of the 8 GPUs, direct and staged, at 512 MiB.
        for i in range(8):
            for j in range(8):
                if i != j:
                    p2p = figures.get(("p2p", i, j), figures.get("p2p", 390.0))
                    row(benchmark="copy_bw", mem="device", path="p2p-direct", pair="gpu%d->gpu%d" % (i, j),
                        size_bytes=512 << 20, bw_GBps="%.3f" % p2p if p2p is not None else "",
                        status="ok" if p2p is not None else "unsupported",
                        note="" if p2p is not None else "\"cudaDeviceCanAccessPeer(%d, %d) = 0\"" % (i, j))
                    row(benchmark="copy_bw", mem="device", path="p2p-staged", reg="staged", pair="gpu%d->gpu%d" % (i, j),
                        size_bytes=512 << 20, bw_GBps="25.000")
        for size in (1 << 30, 16 << 30):
            row(benchmark="nccl_allreduce", layer="nccl", mem="device", path="direct", size_bytes=size, ranks="8",
                algbw_GBps="250.000", busbw_GBps="%.3f" % figures.get("busbw", 470.0))
        row(benchmark="write_bw", layer="verbs", mem="device", path="direct", reg="dmabuf", size_bytes=1 << 20,
            ranks="2", bw_GBps="%.3f" % figures.get("gdr", 48.0))
        d = os.path.join(self.work, "r%d" % len(os.listdir(self.work)))
        os.mkdir(d)
        with open(os.path.join(d, "results.csv"), "w", encoding="utf-8") as f:
            f.write("\n".join([",".join(cols)] + rows) + "\n")
        return d

    def accept(self, figures):
        return run("accept", self.results(figures), "hgx-h200")

    def test_good_figures_pass(self):
        status, out, err = self.accept(dict(self.FIGURES))
        self.assertEqual(status, 0, out + err)
        self.assertIn("PASS: 6 rules, 6 passed", out)

    def test_each_figure_below_its_floor_fails(self):
        for key, value, rule in ((("copy_bw", "pinned", "h2d"), 40.0, "h200-h2d"),
                                 (("copy_bw", "pinned", "d2h"), 47.9, "h200-d2h"),
                                 ("busbw", 430.0, "h200-nccl-allreduce"),
                                 ("gdr", 44.9, "h200-gdr-write")):     # 359.2 Gb/s < 360 Gb/s
            figures = copy.deepcopy(self.FIGURES)
            figures[key] = value
            status, out, err = self.accept(figures)
            self.assertEqual(status, 1, (rule, out + err))
            self.assertRegex(out, r"(?m)^FAIL +%s\b" % rule, out)
            self.assertIn("FAIL: 6 rules, 5 passed, 1 failed", out)


    def test_each_gpu_pair_judged_on_its_own(self):
        """pair=*: one slow pair of 56 fails h200-p2p naming it; a pair without peer access fails
        with CUDA's answer; the aggregate (pair all) rows of other rules are not touched."""
        figures = dict(self.FIGURES)
        figures[("p2p", 3, 5)] = 300.0
        status, out, err = self.accept(figures)
        self.assertEqual(status, 1, out + err)
        self.assertRegex(out, r"(?m)^FAIL +h200-p2p\b", out)
        self.assertIn("gpu3->gpu5: 300", out)
        self.assertNotIn("gpu5->gpu3", out)
        self.assertIn("FAIL: 6 rules, 5 passed, 1 failed", out)
        figures = dict(self.FIGURES)
        figures[("p2p", 6, 1)] = None
        status, out, err = self.accept(figures)
        self.assertEqual(status, 1, out + err)
        self.assertIn("gpu6->gpu1: ", out)
        self.assertIn("cudaDeviceCanAccessPeer(6, 1) = 0", out)

    def test_a_rule_without_pair_star_sees_no_pair_rows(self):
        """The default pair=all: the 112 pair rows of copy_bw are no check of h200-d2d (and no
        copy_bw rule of pair all judges them)."""
        figures = dict(self.FIGURES)
        figures["p2p"] = 1.0
        status, out, err = self.accept(figures)
        self.assertRegex(out, r"(?m)^PASS +h200-d2d\b", out)
        self.assertRegex(out, r"(?m)^FAIL +h200-p2p\b", out)


if __name__ == "__main__":
    unittest.main()


class Sweep(unittest.TestCase):
    def test_sku_sweep_stops_before_measuring_on_a_node_that_differs(self):
        """This build machine has no GPU and no RDMA NIC: the inventory fails and nothing runs."""
        import subprocess
        work = tempfile.mkdtemp(prefix="gdrb-sku-sweep-test.")
        self.addCleanup(shutil.rmtree, work)
        out = os.path.join(work, "r")
        env = dict(os.environ, GDRB_SYSFS=os.path.join(work, "nosys"))
        ran = subprocess.run([str(gdrbtest.GDRB), "sweep", "--sku", "h200", "--out", out, "--bin-dir",
                              str(gdrbtest.BUILD)], capture_output=True, text=True, env=env, timeout=300)
        if "gdrb_doctor" in ran.stderr and "not built" in ran.stderr:
            self.skipTest("gdrb_doctor not built")
        self.assertEqual(ran.returncode, 1, ran.stdout + ran.stderr)
        self.assertIn("inventory h200: FAIL", ran.stdout)
        self.assertIn("nothing measured", ran.stderr)
        with open(os.path.join(out, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        self.assertEqual((meta["status"], meta["inventory"]["verdict"], meta["steps"]), ("inventory", "FAIL", []))
        for argv in (["--sku", "h300"], ["--sku", "h200", "--profile", "quick"]):
            status, out_text, err = run("sweep", *argv)
            self.assertEqual((status, out_text, len(err.splitlines())), (2, "", 1), err)
