"""The nodes' NIC and PCIe counters and the doctor in gdrb accept (docs/counters.md): a suspect
node or link gets the causes found on its ends (error counters that rose, a down-trained PCIe
link, the doctor's FAIL and WARN checks) or "no counter or check explains it"; the rule
`counters errors` fails on any rise on hardware that counts zero when healthy (mlx5), and on
software RDMA (rxe) only where a node's errors per packet stand 10x above the other nodes';
a counter file, or a row of one, that cannot be read is named and makes the rule INVALID, never
taken for "nothing rose" (class FailClosed: each way a row can be unreadable)."""
import json
import os
import unittest
import xml.etree.ElementTree as ET

import gdrbtest  # noqa: F401  (sys.path)
import pairs_fixtures as fx
from test_pairs import PairsCase
from gdrbtool import counters
from gdrbtool.counters import counters_schema

STAMP = "2026-11-27T10:00:00Z"


def counter_rows(rows):
    """A counter file's text: ROWS of (node, device, port, source, counter, class, before, after)
    and a state where not ok (then no delta; None: a reading not written)."""
    s = counters_schema()
    out = [s.header]
    for node, dev, port, source, counter, cls, before, after, *state in rows:
        state = state[0] if state else "ok"
        delta = "" if cls == "link" or state != "ok" else str(after - before)
        out.append(fx.row(s, run_start=STAMP, run_end=STAMP, benchmark="mpi_pairs", node=node, rank=0, device=dev,
                          port=port, source=source, counter=counter, **{"class": cls},
                          before="" if before is None else before, after="" if after is None else after,
                          delta=delta, state=state, run_id="n01:4242:1795860000000000000"))
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
        self.assertEqual(status, {"PASS": 0, "INVALID": 3}.get(expect, 1))
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

    def test_suspect_rail_under_congestion_says_congestion(self):
        # A slow rail whose pause frames (ethtool) and CNPs (hw_counters) rose, no error counter:
        # its cause is congestion, not a link fault, and the counters rule finds no error.
        d = self.results(scenario="node", slow=5)
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "ethtool", "rx_prio3_pause", "congestion", 1200, 91200),
            ("n05", "mlx5_3", "1", "hw_counters", "np_cnp_sent", "congestion", 0, 412),
            ("n05", "mlx5_3", "1", "ethtool", "rx_discards_phy", "error", 0, 0),
            ("n05", "mlx5_3", "1", "counters", "symbol_error", "error", 0, 0),
            ("n02", "mlx5_0", "1", "ethtool", "rx_prio3_pause", "congestion", 5, 5)]))
        out, rule = self.verdict(d, "FAIL")
        self.assertRegex(rule["suspects"][0]["text"],
                         r"^node n05 \(.*\): causes: n05: congestion \(not errors\): mlx5_3 port 1 rx_prio3_pause "
                         r"\+90000, mlx5_3 port 1 np_cnp_sent \+412$")
        self.rule(d, "PASS")

    def test_suspect_with_link_errors_and_congestion_says_both_apart(self):
        d = self.results(scenario="node", slow=5)
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "ethtool", "rx_crc_errors_phy", "error", 0, 31),
            ("n05", "mlx5_3", "1", "ethtool", "tx_prio3_pause", "congestion", 0, 77)]))
        out, rule = self.verdict(d, "FAIL")
        self.assertRegex(rule["suspects"][0]["text"],
                         r"causes: n05: mlx5_3 port 1 rx_crc_errors_phy \+31 / congestion \(not errors\): "
                         r"mlx5_3 port 1 tx_prio3_pause \+77$")
        self.assertIn("rx_crc_errors_phy +31", self.rule(d, "FAIL"))

    def test_a_vanished_or_fallen_ethtool_statistic_is_never_a_pass(self):
        d = self.results(scenario="node", slow=5)
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "ethtool", "rx_discards_phy", "error", 0, None, "vanished"),
            ("n02", "mlx5_0", "1", "counters", "symbol_error", "error", 0, 0)]))
        self.assertIn("n05: mlx5_3 port 1 rx_discards_phy", self.rule(d, "FAIL"))
        self.write(d, "results.counters.csv", counter_rows([
            ("n05", "mlx5_3", "1", "ethtool", "rx_discards_phy", "error", None, None, "unreadable"),
            ("n02", "mlx5_0", "1", "counters", "symbol_error", "error", 0, 0)]))
        self.rule(d, "INVALID")

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
        self.assertIn("pairs.counters.csv: not a counter file of this gdrbench", self.rule(d, "INVALID"))

    def test_a_torn_last_row_and_a_planted_link_are_not_read(self):
        d = self.results()
        rows = counter_rows([("n01", "mlx5_0", "1", "counters", "symbol_error", "error", 0, 880)])
        # The run was cut short inside the delta: 880 written as 88, no newline.
        self.write(d, "results.counters.csv", rows[:rows.rindex("880")] + "88")
        ev = counters.load(d)
        self.assertEqual(ev.nodes.get("n01", counters.Node()).errors, {})
        self.assertEqual([(x.line, x.why) for x in ev.faults.items],
                         [(2, "has no line end: the file was cut while it was written (a cut run)")])
        os.unlink(os.path.join(d, "results.counters.csv"))
        self.write(d, "elsewhere.txt", rows)
        os.symlink("elsewhere.txt", os.path.join(d, "results.counters.csv"))
        ev = counters.load(d)
        self.assertEqual((ev.files, ev.nodes), (1, {}))
        self.assertEqual([x.text() for x in ev.faults.items],
                         [os.path.join(d, "results.counters.csv") + ": a symbolic link (never followed)"])

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
        # An older pairs CSV (no nic_errors column), a torn row, a figure that is not a count:
        # each is named, none claims anything.
        fx.write_lat_rows(path, three("gdrb-vm3"))
        with open(path) as f:
            text = f.read()
        self.write(d, "pairs.csv", text.replace(",nic_errors,nic_packets", "", 1))
        ev = counters.load(d)
        self.assertEqual((ev.pairs, [x.text() for x in ev.faults.items]),
                         ({}, [path + ": not a pairs CSV of this gdrbench (another header)"]))
        lines = text.split("\n")      # rows by (src, dst): vm1-vm2 1, vm1-vm3 30, vm2-vm1 1, vm2-vm3 30...
        lines[2] = lines[2].replace(",30,3000,", ",3e1,3000,")
        lines[4] = lines[4].replace(",30,3000,", ",-30,3000,")
        self.write(d, "pairs.csv", "\n".join(lines[:-2]) + "\n" + lines[-2][:-3])
        ev = counters.load(d)
        self.assertEqual(sum(p.errors for p in ev.pairs.values()), 1 + 1 + 30)
        self.assertEqual([x.text()[len(path):] for x in ev.faults.items],
                         [":7: has no line end: the file was cut while it was written (a cut run)",
                          ":3: nic_errors '3e1' is not a non-negative integer", ":5: nic_errors '-30' is negative"])
        # A FIFO planted at its name is not waited on; it is said.
        os.unlink(path)
        os.mkfifo(path)
        ev = counters.load(d)
        self.assertEqual(ev.pairs, {})
        self.assertEqual([x.text() for x in ev.faults.items], [path + ": not a regular file"])

def crow(**over):
    """One counter file row: n01's mlx5_0 port 1 symbol_error read in state ok, no rise,
    but for the fields OVER names."""
    s = counters_schema()
    f = dict(run_start=STAMP, run_end=STAMP, benchmark="write_bw", node="n01", rank=0, device="mlx5_0", port="1",
             source="counters", counter="symbol_error", before=7, after=7, delta=0, state="ok", run_id="n01:1:1")
    f["class"] = "error"
    f.update(over)
    return fx.row(s, **{c: f[c] for c in s.columns})


class FailClosed(CountersCase):
    """Each way a row of a counter file can fail to be read makes the counters rule INVALID
    (or FAIL, for a counter that vanished), naming the file, the line and why: each of these
    files passed as "no error counter rose" when such rows were skipped."""

    def file(self, *rows, end="\n"):
        d = self.results()
        self.write(d, "results.counters.csv", counters_schema().header + "\n" + crow() + "\n"
                   + "".join(r + end for r in rows))
        return d

    def test_a_row_it_cannot_read_is_invalid(self):
        cases = [("negative delta", crow(node="n02", delta=-5), ":3: delta '-5' is negative"),
                 ("empty delta", crow(node="n02", delta=""), ":3: delta '' is empty"),
                 ("non-integer delta", crow(node="n02", delta="1.5"), ":3: delta '1.5' is not a non-negative integer"),
                 ("hex delta", crow(node="n02", delta="0x10"), ":3: delta '0x10' is not a non-negative integer"),
                 ("non-finite delta", crow(node="n02", delta="nan"), ":3: delta 'nan' is not finite"),
                 ("infinite delta", crow(node="n02", delta="inf"), ":3: delta 'inf' is not finite"),
                 ("out-of-range delta", crow(node="n02", delta=1 << 64),
                  ":3: delta '18446744073709551616' is beyond 18446744073709551615"),
                 ("400 digits", crow(node="n02", delta="9" * 400), ":3: delta '%s...' is beyond" % ("9" * 40)),
                 ("negative link width", crow(node="n02", **{"class": "link"}, after=-8, delta=""),
                  ":3: after '-8' is negative"),
                 ("extra field", crow(node="n02") + ",x", ":3: has %d fields, the schema has %d" % (
                     len(counters_schema().columns) + 1, len(counters_schema().columns))),
                 ("missing field", crow(node="n02").rsplit(",", 1)[0], ":3: has %d fields, the schema has %d" % (
                     len(counters_schema().columns) - 1, len(counters_schema().columns))),
                 ("unknown state", crow(node="n02", state="fine"),
                  ":3: state 'fine' is not one of ok, unreadable, reset, vanished"),
                 ("unknown class", crow(node="n02", **{"class": "errors"}),
                  ":3: class 'errors' is not one of error, congestion, traffic, other, link"),
                 ("empty node", crow(node=""), ":3: node '' is empty"),
                 ("CRLF row", crow(node="n02") + "\r", ":3: ends in CR or CRLF, not LF"),
                 ("CR-only line ends", crow(node="n02") + "\r" + crow(node="n03"), ":3: ends in CR or CRLF, not LF"),
                 ("empty line", "", ":3: is empty")]
        for name, row, why in cases:
            with self.subTest(name):
                d = self.file(row)
                msg = self.rule(d, "INVALID")
                self.assertIn("results.counters.csv" + why, msg)
                self.assertRegex(msg, r"^the counters cannot be judged: 1 row of the counter evidence could not be read")
                status, out, err, v = self.accept(d, "counters errors")
                self.assertEqual((v["verdict"], v["invalid_values"][0]["line"]), ("INVALID", 3))
                self.assertIn("1 row of evidence that could not be read", out)
                self.assertIn("INVALID %s/results.counters.csv%s" % (d, why), out)

    def test_many_rows_are_counted_the_first_named(self):
        d = self.file(*[crow(node="n%d" % i, delta=-i - 1) for i in range(1000)])
        msg = self.rule(d, "INVALID")
        self.assertRegex(msg, r"^the counters cannot be judged: 1000 rows of the counter evidence could not be read: "
                              r".*results\.counters\.csv:3: delta '-1' is negative; .*:4: .*:5: delta '-3' is negative; "
                              r"and 997 more$")
        _, out, _, v = self.accept(d, "counters errors")
        self.assertEqual((v["rules"][0]["invalid_checks"], len(v["invalid_values"])), (1000, 50))
        self.assertIn("1 invalid (1000 rows of evidence that could not be read: the results cannot be judged)", out)

    def test_a_file_of_another_header_or_line_ends_is_invalid(self):
        good = counters_schema().header + "\n" + crow() + "\n"
        for name, text, why in (
                ("another header", "run_start,node,delta\n1,n02,5\n", ": not a counter file of this gdrbench"),
                ("CRLF line ends", good.replace("\n", "\r\n"), ": not a counter file as gdrbench writes it: its lines "
                                                               "end in CR or CRLF, not LF"),
                ("empty", "", ": not a counter file of this gdrbench")):
            with self.subTest(name):
                d = self.file()
                self.write(d, "b.counters.csv", text)
                self.assertIn("b.counters.csv" + why, self.rule(d, "INVALID"))

    def test_a_torn_last_line_is_a_cut_run(self):
        self.assertIn("results.counters.csv:3: has no line end: the file was cut while it was written (a cut run)",
                      self.rule(self.file(crow(node="n02"), end=""), "INVALID"))

    def test_an_unreadable_counter_is_invalid(self):
        msg = self.rule(self.file(crow(node="n02", state="unreadable", before="", after="", delta="")), "INVALID")
        self.assertEqual(msg, "the counters cannot be judged: 1 counter in state unreadable (a reading failed: its "
                              "rise is not known): n02: mlx5_0 port 1 symbol_error")

    def test_states_of_counters_the_rule_does_not_read_are_not_its_evidence(self):
        # A congestion counter or a PCIe link value that could not be read: a cause unknown,
        # not an error counter unjudged.
        self.rule(self.file(crow(node="n02", **{"class": "congestion"}, counter="np_cnp_sent", state="unreadable",
                                 after="", delta=""),
                            crow(node="n02", **{"class": "link"}, counter="current_link_width", state="vanished",
                                 after="", delta="")), "PASS")
        msg = self.rule(self.file(crow(node="n02", **{"class": "traffic"}, counter="port_rcv_packets",
                                       state="unreadable", after="", delta="")), "INVALID")
        self.assertIn("n02: mlx5_0 port 1 port_rcv_packets", msg)

    def test_a_vanished_counter_fails_its_node(self):
        msg = self.rule(self.file(crow(node="n02", device="mlx5_1", state="vanished", after="", delta="")), "FAIL")
        self.assertEqual(msg, "1 counter vanished during the run (a NIC, port or counter that went away): "
                              "n02: mlx5_1 port 1 symbol_error")

    def test_a_reset_is_named_never_an_error_rise(self):
        msg = self.rule(self.file(crow(node="n02", counter="port_rcv_errors", before=90, after=3, delta="",
                                       state="reset")), "PASS")
        self.assertEqual(msg, "no error counter rose beyond what its provider allows on 1 node; fell (state reset: "
                              "a 32-bit counter wrapped or the NIC was reset; not an error rise): "
                              "n02: mlx5_0 port 1 port_rcv_errors")

    def test_judged_on_no_node_is_nodata(self):
        d = self.results()
        self.write(d, "results.counters.csv", counters_schema().header + "\n")
        self.assertIn("judged on 0 nodes", self.rule(d, "NODATA"))
        self.write(d, "results.counters.csv", counters_schema().header + "\n" + crow(
            **{"class": "link"}, counter="current_link_width", delta="") + "\n")
        self.rule(d, "NODATA")

    def test_two_runs_in_one_second_are_kept_apart(self):
        # Two launches of one benchmark that started in the same second, each with its rise.
        d = self.file(crow(before=0, after=5, delta=5, run_id="n01:100:1"),
                      crow(before=5, after=10, delta=5, run_id="n01:200:2"),
                      crow(rank=1, before=5, after=10, delta=5, run_id="n01:200:2"))
        self.assertEqual(self.rule(d, "FAIL"), "NIC error counters rose on 1 node: n01: mlx5_0 port 1 symbol_error +10")

    def test_a_version_1_file_is_read_by_its_run_start(self):
        # Written before the run_id column: the rises of one run_start and benchmark count once.
        s = counters_schema()
        v1 = s.columns[:s.widths[1]]
        d = self.results()
        self.write(d, "results.counters.csv", ",".join(v1) + "\n" + "".join(
            crow(before=0, after=5, delta=5, run_id=r).rsplit(",", 1)[0] + "\n" for r in ("a", "b")))
        self.assertEqual(self.rule(d, "FAIL"), "NIC error counters rose on 1 node: n01: mlx5_0 port 1 symbol_error +5")

    def test_a_malformed_doctor_is_named_with_the_causes_and_never_passes(self):
        # The suspect's causes say doctor.json could not be read, and the whole verdict is
        # INVALID (exit 3), a JUnit error too: a healthy fabric beside an unreadable doctor's
        # report is not a pass either.
        for scenario, rule_verdict in (("node", "FAIL"), ("healthy", "PASS")):
            d = self.results(scenario=scenario, slow=5) if scenario == "node" else self.results()
            for text in ("{not json", "[1, 2]", '{"nodes": [{"host": "n05", "checks": ["acs"]}]}'):
                with self.subTest(scenario=scenario, doctor=text):
                    self.write(d, "doctor.json", text)
                    status, out, err, v = self.accept(d, "pairs bw below=80%median size=8M")
                    self.assertEqual((status, v["verdict"], v["rules"][0]["verdict"]), (3, "INVALID", rule_verdict),
                                     out + err)
                    self.assertRegex(out, r"(?m)^INVALID: .*doctor\.json could not be read")
                    junit = ET.parse(os.path.join(d, "verdict.xml")).getroot()
                    self.assertEqual(junit.get("errors"), "1")
                    if scenario == "node":
                        self.assertRegex(v["rules"][0]["suspects"][0]["text"],
                                         r"no counter or check explains it \(1 row of the "
                                         r"evidence could not be read: .*doctor\.json: ")


if __name__ == "__main__":
    unittest.main()
