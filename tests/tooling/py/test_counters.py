"""The nodes' NIC and PCIe counters and the doctor in gdrb accept (docs/counters.md): a suspect
node or link gets the causes found on its ends (error counters that rose, a down-trained PCIe
link, the doctor's FAIL and WARN checks) or "no counter or check explains it"; the rule
`counters errors` fails on any rise on hardware that counts zero when healthy (mlx5), and on
software RDMA (rxe) only where a node's errors per packet stand 10x above the other nodes';
a counter file that cannot be read is said, never taken for "nothing rose"."""
import json
import os
import unittest

import gdrbtest  # noqa: F401  (sys.path)
import pairs_fixtures as fx
from test_pairs import PairsCase
from gdrbtool import counters
from gdrbtool.counters import counters_schema

STAMP = "2026-11-27T10:00:00Z"


def counter_rows(rows):
    """A counter file's text: ROWS of (node, device, port, source, counter, class, before, after)."""
    s = counters_schema()
    out = [s.header]
    for node, dev, port, source, counter, cls, before, after in rows:
        delta = "" if cls == "link" else str(after - before)
        out.append(fx.row(s, run_start=STAMP, run_end=STAMP, benchmark="mpi_pairs", node=node, rank=0, device=dev,
                          port=port, source=source, counter=counter, **{"class": cls}, before=before, after=after,
                          delta=delta, state="ok"))
    return "\n".join(out) + "\n"


def rxe(node, errors, packets):
    return [(node, "rxe0", "1", "hw_counters", "duplicate_request", "error", 0, errors),
            (node, "rxe0", "1", "hw_counters", "sent_pkts", "traffic", 0, packets)]


class CountersCase(PairsCase):
    def write(self, d, name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    def rule(self, d, expect):
        status, out, err, v = self.accept(d, "counters errors")
        self.assertEqual(v["rules"][0]["verdict"], expect, out + err)
        self.assertEqual(status, 0 if expect == "PASS" else 1)
        return v["rules"][0]["message"]


class Evidence(CountersCase):
    def test_suspect_node_gets_its_causes(self):
        # Rank 5 is node n05 (pairs_fixtures: a rank per node): its counters, PCIe and doctor.
        d = self.results(scenario="node", slow=5)
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "counters", "symbol_error", "error", 10, 890),
            ("n05", "mlx5_3", "1", "counters", "link_downed", "error", 1, 3),
            ("n05", "gpu", "0000:1b:00.0", "link", "current_link_width", "link", 8, 8),
            ("n05", "gpu", "0000:1b:00.0", "link", "max_link_width", "link", 16, 16),
            ("n02", "mlx5_0", "1", "counters", "symbol_error", "error", 4, 4)]))
        self.write(d, "doctor.json", json.dumps({"tool": "gdrb_doctor_mpi", "verdict": "FAIL", "nodes": [
            {"host": "n05", "rank": 5, "checks": {"acs": "FAIL", "iommu": "PASS"}},
            {"host": "n02", "rank": 2, "checks": {"acs": "PASS"}}]}))
        out, rule = self.verdict(d, "FAIL")
        self.assertRegex(rule["suspects"][0]["text"],
                         r"^node n05 \(.*\): causes: n05: mlx5_3 port 1 symbol_error \+880, mlx5_3 port 1 "
                         r"link_downed \+2 / PCIe 0000:1b:00\.0 \(gpu\) x8 of x16 / doctor: FAIL acs$")
        self.assertIn("causes: n05: mlx5_3 port 1 symbol_error +880", out)

    def test_suspect_without_evidence_says_so(self):
        d = self.results(scenario="node", slow=5)
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "counters", "symbol_error", "error", 10, 10)]))
        _, rule = self.verdict(d, "FAIL")
        self.assertTrue(rule["suspects"][0]["text"].endswith(": no counter or check explains it"),
                        rule["suspects"][0]["text"])

    def test_link_suspect_gets_both_ends(self):
        d = self.results(scenario="link2", src=3, dst=6)
        self.write(d, "results.counters.csv", counter_rows([
            ("n06", "mlx5_0", "1", "hw_counters", "out_of_sequence", "error", 0, 41)]))
        _, rule = self.verdict(d, "FAIL")
        self.assertRegex(rule["suspects"][0]["text"],
                         r"^link n03 <-> n06 .*: causes: n06: mlx5_0 port 1 out_of_sequence \+41$")

    def test_no_counters_and_no_doctor_no_causes(self):
        # Results of an older gdrbench: nothing was looked at, so nothing is claimed.
        _, rule = self.verdict(self.results(scenario="node", slow=5), "FAIL")
        self.assertNotIn("caus", rule["suspects"][0]["text"])
        self.assertNotIn("explains", rule["suspects"][0]["text"])

    def test_counters_rule_hardware_any_rise(self):
        d = self.results()
        self.write(d, "results.counters.csv", counter_rows([
            ("n01", "mlx5_0", "1", "counters", "symbol_error", "error", 0, 0),
            ("n06", "mlx5_2", "1", "counters", "symbol_error", "error", 100, 1632)]))
        msg = self.rule(d, "FAIL")
        self.assertEqual(msg, "NIC error counters rose on 1 node: n06: mlx5_2 port 1 symbol_error +1532")
        self.write(d, "results.counters.csv", counter_rows([
            ("n06", "mlx5_2", "1", "counters", "symbol_error", "error", 100, 100)]))
        self.assertIn("no error counter rose", self.rule(d, "PASS"))

    def test_counters_rule_soft_rdma_relative(self):
        # rxe retransmits on a clean link: 496 and 510 per 10000 packets are the fabric's own;
        # 9000 per 10000 is the lossy node's.
        d = self.results()
        self.write(d, "results.counters.csv", counter_rows(
            rxe("gdrb-vm1", 496, 10000) + rxe("gdrb-vm2", 510, 10000) + rxe("gdrb-vm3", 9000, 10000)))
        msg = self.rule(d, "FAIL")
        self.assertRegex(msg, r"^NIC error counters rose on 1 node: gdrb-vm3: rxe0 port 1 duplicate_request \+9000 "
                              r"\(0\.900 errors per packet: 18x the other nodes' median\)$")
        self.write(d, "results.counters.csv", counter_rows(
            rxe("gdrb-vm1", 496, 10000) + rxe("gdrb-vm2", 510, 10000) + rxe("gdrb-vm3", 700, 10000)))
        self.assertIn("no error counter rose beyond what its provider allows on 3 nodes", self.rule(d, "PASS"))

    def test_counters_rule_soft_rdma_alone_not_judged(self):
        d = self.results()
        self.write(d, "results.counters.csv", counter_rows(rxe("gdrb-vm1", 13, 300)))
        self.assertIn("rose on software RDMA, not judged (no other node to compare with): gdrb-vm1: rxe0 port 1 "
                      "duplicate_request +13", self.rule(d, "PASS"))

    def test_counters_rule_without_a_file_or_with_a_bad_one(self):
        d = self.results()
        status, out, err, v = self.accept(d, "counters errors")
        self.assertEqual((status, v["rules"][0]["verdict"]), (1, "NODATA"), out + err)
        self.write(d, "pairs.counters.csv", "not,a,counter,file\n1,2,3,4\n")
        status, out, err, v = self.accept(d, "counters errors")
        self.assertEqual(v["rules"][0]["verdict"], "NODATA")
        self.assertIn("pairs.counters.csv: not a counter file of this gdrbench", v["rules"][0]["message"])

    def test_a_torn_last_row_and_a_planted_link_are_not_read(self):
        d = self.results()
        rows = counter_rows([("n01", "mlx5_0", "1", "counters", "symbol_error", "error", 0, 880)])
        # The run was cut short inside the delta: 880 written as 88, no newline.
        self.write(d, "results.counters.csv", rows[:rows.rindex("880")] + "88")
        self.assertEqual(counters.load(d).nodes.get("n01", counters.Node()).errors, {})
        os.unlink(os.path.join(d, "results.counters.csv"))
        self.write(d, "elsewhere.txt", rows)
        os.symlink("elsewhere.txt", os.path.join(d, "results.counters.csv"))
        ev = counters.load(d)
        self.assertEqual((ev.files, ev.nodes), (0, {}))
        self.assertEqual(len(ev.problems), 1)
        self.assertTrue(ev.problems[0].startswith("results.counters.csv: "), ev.problems)

    def test_profile_refuses_a_bad_counters_line(self):
        for line in ("counters", "counters warnings", "counters errors x=1", "counters errors name=a/b"):
            with self.subTest(line=line):
                status, out, err, _ = self.accept(self.results(), line)
                self.assertEqual(status, 2, out + err)
                self.assertIn("counters", err)

    def test_one_node_two_ranks_one_port_counted_once(self):
        d = self.results()
        rows = counter_rows([("n01", "rxe0", "1", "hw_counters", "duplicate_request", "error", 0, 40)])
        self.write(d, "results.counters.csv", rows + rows.split("\n", 1)[1])
        ev = counters.load(d)
        self.assertEqual(ev.nodes["n01"].errors, {("rxe0", "1", "duplicate_request"): 40})


def three(lossy=None, rate=(30, 3000), clean=(1, 3000)):
    """The six latency pairs of gdrb-vm1..3: the pairs of node LOSSY at RATE (errors, packets),
    the others at CLEAN."""
    hosts = ["gdrb-vm1", "gdrb-vm2", "gdrb-vm3"]
    return {(a, b): rate if lossy in (a, b) else clean for a in hosts for b in hosts if a != b}


class ByPair(CountersCase):
    """The all-pairs latency rows say what each pair's ends counted while that pair alone was
    measured: a node whose every pair counted errors per packet 3x the pairs without it is
    named, where the whole-run rates cannot tell it apart (three nodes: its peers meet it in
    half their pairs and retry as often)."""

    def test_lossy_node_named_by_its_pairs(self):
        d = self.results()
        # Whole-run rates alike: each node's counters alone name none.
        self.write(d, "results.counters.csv", counter_rows(
            rxe("gdrb-vm1", 120, 10000) + rxe("gdrb-vm2", 110, 10000) + rxe("gdrb-vm3", 130, 10000)))
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), three("gdrb-vm3"))
        msg = self.rule(d, "FAIL")
        self.assertEqual(msg, "NIC error counters rose on 1 node: gdrb-vm3: rxe0 port 1 duplicate_request +130 over "
                              "the run; in its 2 pairs' latency phases 120 errors in 12000 packets (0.0100 per packet: "
                              "30x the pairs without it)")

    def test_healthy_pairs_name_none(self):
        d = self.results()
        self.write(d, "results.counters.csv", counter_rows(
            rxe("gdrb-vm1", 120, 10000) + rxe("gdrb-vm2", 110, 10000) + rxe("gdrb-vm3", 130, 10000)))
        # One node's pairs 2.5x the other pair: rxe's own spread in the VMs, not a fault.
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), three("gdrb-vm3", rate=(10, 3000), clean=(4, 3000)))
        self.assertIn("no error counter rose beyond what its provider allows", self.rule(d, "PASS"))

    def test_too_few_errors_on_software_rdma(self):
        d = self.results()
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), three("gdrb-vm3", rate=(4, 3000), clean=(0, 3000)))
        self.assertEqual(counters.load(d).by_pair(), {})

    def test_hardware_any_rise_in_every_pair(self):
        d = self.results()
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), three("gdrb-vm2", rate=(2, 3000), clean=(0, 3000)),
                          nic="mlx5_0:1")
        self.assertEqual(list(counters.load(d).by_pair()), ["gdrb-vm2"])
        self.assertIn("8 errors in 12000 packets (0.000667 per packet: the pairs without it none)", counters.load(d).by_pair()["gdrb-vm2"])
        # One of its pairs clean: a link, not the node.
        p = three("gdrb-vm2", rate=(2, 3000), clean=(0, 3000))
        p[("gdrb-vm2", "gdrb-vm3")] = p[("gdrb-vm3", "gdrb-vm2")] = (0, 3000)
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), p, nic="mlx5_0:1")
        self.assertEqual(counters.load(d).by_pair(), {})

    def test_suspect_node_gets_its_pairs_as_cause(self):
        d = self.results(scenario="node", slow=5)
        hosts = ["n%02d" % i for i in range(8)]
        fx.write_lat_rows(os.path.join(d, "pairs.csv"), {
            (a, b): (9, 1000) if "n05" in (a, b) else (0, 1000) for a in hosts for b in hosts if a != b},
            nic="mlx5_0:1")
        _, rule = self.verdict(d, "FAIL")
        self.assertRegex(rule["suspects"][0]["text"],
                         r"^node n05 \(.*\): causes: n05: in its 7 pairs' latency phases 126 errors in 14000 "
                         r"packets \(0\.00900 per packet: the pairs without it none\)$")

    def test_rows_that_claim_nothing(self):
        d = self.results()
        path = os.path.join(d, "pairs.csv")
        # Empty fields (a pair whose ends share a port, a port not read): no figure, no claim.
        fx.write_lat_rows(path, {k: (None, None) for k in three("gdrb-vm3")})
        self.assertEqual(counters.load(d).pairs, {})
        # An older pairs CSV (no nic_errors column), a torn row, a figure that is not a count.
        fx.write_lat_rows(path, three("gdrb-vm3"))
        with open(path) as f:
            text = f.read()
        self.write(d, "pairs.csv", text.replace(",nic_errors,nic_packets", "", 1))
        self.assertEqual(counters.load(d).pairs, {})
        lines = text.split("\n")      # rows by (src, dst): vm1-vm2 1, vm1-vm3 30, vm2-vm1 1, vm2-vm3 30...
        lines[2] = lines[2].replace(",30,3000,", ",3e1,3000,")
        lines[4] = lines[4].replace(",30,3000,", ",-30,3000,")
        self.write(d, "pairs.csv", "\n".join(lines[:-2]) + "\n" + lines[-2][:-3])
        ev = counters.load(d)
        self.assertEqual(sum(p.errors for p in ev.pairs.values()), 1 + 1 + 30)
        # A FIFO planted at its name is not waited on; it is said.
        os.unlink(path)
        os.mkfifo(path)
        ev = counters.load(d)
        self.assertEqual(ev.pairs, {})
        self.assertTrue(any(p.startswith("pairs.csv: ") for p in ev.problems), ev.problems)


if __name__ == "__main__":
    unittest.main()
