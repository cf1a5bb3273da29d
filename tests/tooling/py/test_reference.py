"""gdrbtool.reference, the GPU bundle's report: nccl-tests' table (a real capture, its -I form,
cut short, not its format), nvbandwidth's matrices (its format, an error, cut short), gdrbench's
CSVs, each figure beside its reference with the ratio, a gap over 5% flagged and one within it
not, an unreadable output named in its rows while the rest stands, the MPI transport from UCX's
protocol tables or "unknown"."""
import io
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtool import reference

DATA = Path(__file__).resolve().parent / "reference_data"
NT = (DATA / "nt-all_reduce.txt").read_text(encoding="utf-8")
NVB = (DATA / "nvbandwidth.txt").read_text(encoding="utf-8")
UCX = (DATA / "ucx-proto-info.txt").read_text(encoding="utf-8")

HEAD = ("benchmark,mem,path,size_bytes,lat_avg_us,bw_GBps,status,placement,timing,calls_per_sync\n")


def gd_nccl(rows):
    """A gdrbench NCCL CSV: (size, placement, us) rows of nccl_allreduce."""
    return HEAD + "".join("nccl_allreduce,device,direct,%d,%s,,ok,%s,batch,20\n" % (s, t, p)
                          for s, p, t in rows)


class NcclTests(unittest.TestCase):
    def test_real_capture(self):
        got = reference.parse_nccl_tests(NT)
        self.assertEqual(len(got), 48)   # 24 sizes, out of place and in place
        self.assertEqual(got[8, "out-of-place"], 5.82)
        self.assertEqual(got[8, "in-place"], 0.34)
        self.assertEqual(got[67108864, "out-of-place"], 35.28)

    def test_per_iteration_columns(self):
        # writeResultHeader's -I 1 form: four per-iteration columns after each placement's four
        text = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong"
                "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
                "    i_p99    i_cv%\n"
                "         1024           256     float     sum      -1     7.10    0.14    0.00       0"
                "     6.90     8.00     7.90     2.10     1.20    0.85    0.00       0     1.10     1.40"
                "     1.35     3.00\n")
        self.assertEqual(reference.parse_nccl_tests(text), {(1024, "out-of-place"): 7.10,
                                                            (1024, "in-place"): 1.20})

    def test_cut_short(self):
        lines = NT.split("\n")
        cut = next(i for i, ln in enumerate(lines) if ln.strip().startswith("1048576"))
        text = "\n".join(lines[:cut]) + "\n" + lines[cut][:40]   # a size's line cut in its middle
        got = reference.parse_nccl_tests(text)
        self.assertEqual(len(got), 2 * 17)   # 8 B .. 512 KiB whole; the cut line is not read
        self.assertNotIn((1048576, "out-of-place"), got)

    def test_not_its_format(self):
        for text, why in (("all_reduce_perf: error while loading shared libraries: libnccl.so.2\n",
                           "no nccl-tests column header"),
                          ("", "no nccl-tests column header"),
                          (NT.split("           8 ")[0], "no row of figures")):
            with self.assertRaises(reference.Unreadable) as e:
                reference.parse_nccl_tests(text)
            self.assertIn(why, str(e.exception))
        with self.assertRaises(reference.Unreadable) as e:
            reference.parse_nccl_tests("libnccl.so.2: cannot open shared object file\n")
        self.assertIn("it begins: libnccl.so.2: cannot open", str(e.exception))


class Nvbandwidth(unittest.TestCase):
    def test_its_format(self):
        got = reference.parse_nvbandwidth(NVB)
        self.assertEqual(got["host_to_device_memcpy_ce"], 55.12)
        self.assertEqual(got["device_to_host_memcpy_ce"], 54.80)
        self.assertEqual(got["device_local_copy"], 1730.45)
        self.assertEqual(got["device_to_host_bidirectional_memcpy_sm"], "Error: CUDA error: invalid argument")

    def test_cut_short(self):
        text = NVB.split(" 0     54.80")[0]   # device_to_host_memcpy_ce's matrix header, no row
        got = reference.parse_nvbandwidth(text)
        self.assertEqual(got["host_to_device_memcpy_ce"], 55.12)
        self.assertIn("printed no figure", got["device_to_host_memcpy_ce"])

    def test_not_its_format(self):
        with self.assertRaises(reference.Unreadable) as e:
            reference.parse_nvbandwidth("nvbandwidth: error while loading shared libraries: libcuda.so.1\n")
        self.assertIn("it begins: nvbandwidth: error while loading", str(e.exception))


class Transport(unittest.TestCase):
    def test_from_ucx_tables(self):
        self.assertEqual(reference.mpi_transport(UCX), "CUDA IPC")

    def test_unknown(self):
        self.assertEqual(reference.mpi_transport("rank 0: nothing from UCX\n"), "unknown")
        host_only = UCX.split("[1796227209.098001]")[0]   # the captured tables: host memory only
        self.assertIn("sysv/memory", host_only)
        self.assertEqual(reference.mpi_transport(host_only), "unknown")

    def test_pipeline_and_lanes(self):
        table = UCX.replace("| rendezvous zero-copy read from remote         | cuda_ipc/cuda |",
                            "| rendezvous pipeline cuda_copy, fenced write   | 50% on cuda_copy/cuda and 50% on rc_mlx5/mlx5_0:1 |")
        self.assertEqual(reference.mpi_transport(table),
                         "cuda_copy (copies through host memory), RDMA rc_mlx5 (a pipeline)")


class Report(unittest.TestCase):
    def setUp(self):
        self.raw = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.raw)
        for d in ("nccl", "copies", "mpi"):
            os.mkdir(os.path.join(self.raw, d))

    def put(self, name, text):
        with open(os.path.join(self.raw, name), "w", encoding="utf-8") as f:
            f.write(text)

    def report(self):
        err = io.StringIO()
        with redirect_stderr(err):
            text = reference.report(self.raw)
        self.assertEqual(err.getvalue(), "")
        return text

    def line(self, text, *cells):
        hits = [ln for ln in text.split("\n") if ln.startswith("| " + " | ".join(cells) + " |")]
        self.assertEqual(len(hits), 1, (cells, text))
        return hits[0]

    def test_nccl_gap_flagged(self):
        # nccl-tests 8 B: 5.82 us out of place, 0.34 in place; 1 KiB: 6.50 and 0.42
        self.put("nccl/nt-all_reduce-r1.txt", NT)
        self.put("nccl/gd-all_reduce-r1.csv", gd_nccl([(8, "out-of-place", "6.00"),      # +3.1%: ok
                                                       (8, "in-place", "0.40"),          # +17.6%
                                                       (1024, "out-of-place", "6.10"),   # -6.2%
                                                       (1024, "in-place", "0.43")]))     # +2.4%
        text = self.report()
        self.assertIn("| ok |", self.line(text, "8 B", "out-of-place", "6.00", "5.82", "1.031"))
        self.assertIn("**GAP +18%** (gdrbench slower)", self.line(text, "8 B", "in-place"))
        self.assertIn("**GAP -6%** (gdrbench faster)", self.line(text, "1 KiB", "out-of-place"))
        self.assertIn("| ok |", self.line(text, "1 KiB", "in-place"))
        self.assertIn("gdrbench gave no figure", self.line(text, "16 B", "out-of-place"))
        self.assertIn("batch x20", text)

    def test_median_of_rounds(self):
        self.put("nccl/nt-all_reduce-r1.txt", NT)
        for r, t in ((1, "6.0"), (2, "9.0"), (3, "5.9")):
            self.put("nccl/gd-all_reduce-r%d.csv" % r, gd_nccl([(8, "out-of-place", t)]))
        self.assertIn("| 6.00 | 5.82 |", self.line(self.report(), "8 B", "out-of-place"))

    def test_unreadable_nccl_tests_rest_stands(self):
        self.put("nccl/nt-all_reduce-r1.txt", "all_reduce_perf: error while loading shared libraries\n")
        self.put("nccl/gd-all_reduce-r1.csv", gd_nccl([(8, "out-of-place", "6.00")]))
        self.put("copies/nvb-b512.txt", NVB)
        self.put("copies/gd-copy.csv", HEAD + "copy_bw,pinned,h2d,536870912,,60.00,ok,,,\n")
        text = self.report()
        self.assertIn("nccl-tests output nt-all_reduce-r1.txt unreadable: no nccl-tests column header", text)
        self.assertIn("nccl-tests gave no figure (see above)", self.line(text, "8 B", "out-of-place", "6.00"))
        # the copies stand: 60.00 beside 55.12 is +8.9%, flagged (gdrbench faster)
        self.assertIn("**GAP +9%** (gdrbench faster)",
                      self.line(text, "host to device, copy engine", "512 MiB", "60.0", "55.1"))

    def test_copies(self):
        self.put("copies/nvb-b512.txt", NVB)
        self.put("copies/nvb-b64.txt", "nvbandwidth: error while loading shared libraries: libcuda.so.1\n")
        self.put("copies/gd-copy.csv", HEAD + "copy_bw,pinned,h2d,536870912,,54.00,ok,,,\n"
                 "copy_bw,pinned,d2h,536870912,,49.00,ok,,,\n"
                 "copy_bw,pinned,h2d,67108864,,50.00,ok,,,\n")
        text = self.report()
        self.assertIn("| ok |", self.line(text, "host to device, copy engine", "512 MiB", "54.0", "55.1", "0.980"))
        self.assertIn("**GAP -11%** (gdrbench slower)", self.line(text, "device to host, copy engine", "512 MiB"))
        self.assertIn("nvbandwidth output nvb-b64.txt unreadable", text)
        self.assertIn("nvbandwidth output unreadable (above)", self.line(text, "host to device, copy engine", "64 MiB"))
        self.assertIn("| 48.3 | 0.876 x |", self.line(text, "host to device, SM", "512 MiB"))
        self.assertIn("Error: CUDA error", self.line(text, "device to host while host to device, SM", "512 MiB"))

    def test_copies_events_rows_first_and_both_directions(self):
        """--copy-timing events' rows (nvbandwidth's shape) are set beside nvbandwidth before the
        per-copy default's, both directions at once beside its bidirectional testcases, each at the
        size over the median time (lat_p50_us), not the mean."""
        self.put("copies/nvb-b512.txt", NVB)
        self.put("copies/gd-copy.csv", HEAD + "copy_bw,pinned,h2d,536870912,,40.00,ok,,,\n")
        # 536870912 B / 9.8 us... : p50 9740.1 us -> 55.12 GB/s; the mean's 50.00 is not used
        self.put("copies/gd-copy-events.csv", "benchmark,mem,path,size_bytes,lat_p50_us,bw_GBps,status\n"
                 "copy_bw,pinned,h2d-batch,536870912,9740.1,50.00,ok\n"
                 "copy_bw,pinned,h2d-bidir,536870912,20000.0,26.00,ok\n")
        text = self.report()
        self.assertIn("| ok | pinned h2d-batch |", self.line(text, "host to device, copy engine", "512 MiB", "55.1"))
        self.assertIn("pinned h2d-bidir", self.line(text, "host-to-device leg of both directions at once, copy engine",
                                                    "512 MiB", "26.8"))
        self.assertNotIn("40.0", self.line(text, "host to device, copy engine", "512 MiB"))

    def test_not_carried(self):
        self.put("nccl/status.txt", "nccl-tests: not carried (the bundle was built without it)\n")
        self.put("nccl/gd-all_reduce-r1.csv", gd_nccl([(8, "out-of-place", "6.00")]))
        self.put("copies/status.txt", "nvbandwidth: not carried (the bundle was built without it)\n")
        self.put("copies/gd-copy.csv", HEAD + "copy_bw,pinned,h2d,1048576,,20.00,ok,,,\n")
        text = self.report()
        self.assertIn("nccl-tests not carried", self.line(text, "8 B", "out-of-place"))
        self.assertIn("nvbandwidth not carried", self.line(text, "host to device, copy engine", "1 MiB"))

    def test_mpi_rows(self):
        self.put("mpi/gdrb_mpi_bw.csv", "benchmark,mem,path,size_bytes,lat_avg_us,bw_GBps,status\n"
                 "mpi_bw,device,direct,4194304,,20.0,ok\nmpi_bw,device,staged,4194304,,10.0,ok\n"
                 "mpi_bw,device,staged-serial,4194304,,5.0,ok\n")
        self.put("mpi/gdrb_mpi_bw.txt", UCX)
        self.put("mpi/gdrb_mpi_latency.csv", "benchmark,mem,path,size_bytes,lat_avg_us,bw_GBps,status\n"
                 "mpi_latency,device,direct,8,,,unsupported\nmpi_latency,device,staged,8,3.5,,ok\n")
        self.put("mpi/gdrb_mpi_bcast.csv", "garbage\n")
        text = self.report()
        self.assertIn("| 2.000 | CUDA IPC |", self.line(text, "gdrb_mpi_bw", "4 MiB", "20.0", "10.0", "5.00"))
        self.assertIn("| unsupported | 3.50 |", self.line(text, "gdrb_mpi_latency", "8 B"))
        self.assertIn("not a gdrbench CSV", self.line(text, "gdrb_mpi_bcast"))

    def test_main(self):
        self.put("copies/nvb-b1.txt", "\x1b[31mred|pipe\n")
        out_file = os.path.join(self.raw, "reference.md")
        self.assertEqual(reference.main(["--out", out_file, self.raw]), 0)
        text = Path(out_file).read_text(encoding="utf-8")
        self.assertNotIn("\x1b", text)
        self.assertIn("red\\|pipe", text)
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(reference.main([os.path.join(self.raw, "nonexistent")]), 2)
        self.assertEqual(len(err.getvalue().strip().split("\n")), 1)


if __name__ == "__main__":
    unittest.main()
