"""Made-up all-pairs results directories (the formats of docs/pairs.md): matrix files, the
rank table and a few pairs.csv rows, their columns by name from their one definitions
(common/core/pairs_ranks.def, pairs_schema.def). Values are generated, never measured.

  write(DIR, n=8, scenario="healthy", ...)   one matrix (and pairs-ranks.csv) into DIR

Scenarios: healthy; node (rank SLOW's sends and receives at 42%); link (SRC -> DST at 40%, one
direction); link2 (both directions); rail (GPUS per node, GPU i pairs only with GPU i of the
others; rail SLOW at 45% on every node); lonely (rank SLOW measured only with rank PEER, both
directions, at 40%: it cannot be told from that link); round (every pair s -> s + SLOW at 42%:
one round of shifts); missing (healthy, some cells empty).
"""
import os
import random

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtool import pairs

BASE_BW, BASE_LAT = 12.0, 2.0


def value(rng, base):
    return base * (1 + rng.uniform(-0.02, 0.02))


def matrix(n, scenario="healthy", metric="bw", slow=5, src=3, dst=6, gpus=1, peer=2, seed=1):
    """The n x n cells (None: not measured) of SCENARIO."""
    rng = random.Random(seed)
    base = BASE_BW if metric == "bw" else BASE_LAT

    def bad(v):
        return v * 0.42 if metric == "bw" else v * 3.0

    cells = [[None if s == d else value(rng, base) for d in range(n)] for s in range(n)]
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            if scenario == "node" and slow in (s, d):
                cells[s][d] = bad(cells[s][d])
            elif scenario in ("link", "link2") and (s, d) == (src, dst):
                cells[s][d] = bad(cells[s][d])
            elif scenario == "link2" and (s, d) == (dst, src):
                cells[s][d] = bad(cells[s][d])
            elif scenario == "rail":
                if s % gpus != d % gpus:
                    cells[s][d] = None            # GPU i pairs only with GPU i
                elif s % gpus == slow:
                    cells[s][d] = bad(cells[s][d])
            elif scenario == "lonely" and slow in (s, d):
                cells[s][d] = bad(cells[s][d]) if peer in (s, d) else None
            elif scenario == "round" and (d - s) % n == slow:
                cells[s][d] = bad(cells[s][d])
            elif scenario == "missing" and (s * 7 + d) % 5 == 0:
                cells[s][d] = None
    return cells


def fmt(v):
    return "" if v is None else "%.3f" % v


def write_matrix(path, cells):
    n = len(cells)
    with open(path, "w") as f:
        f.write("src\\dst," + ",".join(str(i) for i in range(n)) + "\n")
        for s, row in enumerate(cells):
            f.write("%d,%s\n" % (s, ",".join(fmt(v) for v in row)))


def row(schema, **fields):
    """One CSV row of SCHEMA (common.Schema) from its fields by name: each column named once."""
    if set(fields) != set(schema.columns):
        raise ValueError("fields %s: not the schema's columns" % sorted(set(fields) ^ set(schema.columns)))
    return ",".join(str(fields[c]) for c in schema.columns)


def write_ranks(directory, n, gpus=1):
    s = pairs.ranks_schema()
    with open(os.path.join(directory, pairs.RANKS_FILE), "w") as f:
        f.write(s.header + "\n")
        for r in range(n):
            f.write(row(s, rank=r, host="n%02d" % (r // gpus), local_rank=r % gpus,
                        gpu="0000:%02x:00.0" % (0x17 + r % gpus), nic="mlx5_%d" % (r % gpus)) + "\n")


def write(directory, n=8, scenario="healthy", metric="bw", size=8388608, path="direct", mem="host",
          ranks=True, **kw):
    """DIRECTORY/pairs-[lat-]MEM-SIZE-PATH.csv (no MEM- when MEM is empty) and pairs-ranks.csv."""
    os.makedirs(directory, exist_ok=True)
    gpus = kw.get("gpus", 1)
    name = "pairs-%s%s%d-%s.csv" % ("lat-" if metric == "lat" else "", mem + "-" if mem else "", size, path)
    file = os.path.join(directory, name)
    write_matrix(file, matrix(n, scenario, metric, **kw))
    if ranks:
        write_ranks(directory, n, gpus)
    return file


def write_lat_rows(path, counted, nic="rxe0:1", size=8):
    """PATH, a pairs CSV of latency rows whose ends counted NIC errors: COUNTED maps
    (src_host, dst_host) to (nic_errors, nic_packets), either None for an empty field."""
    s = pairs.pairs_schema()
    hosts = sorted({h for k in counted for h in k})
    with open(path, "w") as f:
        f.write(s.header + "\n")
        for (a, b), (errors, packets) in sorted(counted.items()):
            f.write(row(s, benchmark="write_pairs", layer="verbs", mem="host", path="direct", reg="host",
                        metric="lat", size_bytes=size, round=1, src_rank=hosts.index(a), dst_rank=hosts.index(b),
                        src_host=a, dst_host=b, src_local_rank=0, dst_local_rank=0, src_gpu="", dst_gpu="",
                        src_nic=nic, dst_nic=nic, iterations=100, bw_GBps="", lat_us="10.000", status="ok", errors=0,
                        nic_errors="" if errors is None else errors, nic_packets="" if packets is None else packets,
                        note="", timestamp="2026-11-25T00:00:00Z", version="0.1.0") + "\n")


def fake_binary(argv, scenario="healthy"):
    """A stand-in for gdrb_mpi_pairs in the sweep's tests: --csv FILE --mem MEM (the rest is
    ignored); writes FILE (the pairs CSV), the rank table and the matrices beside it, 8 ranks,
    8 MiB bandwidth and 8 B latency, direct (and staged for device memory)."""
    csv_path, mem = "", "host"
    for i, a in enumerate(argv):
        if a == "--csv":
            csv_path = argv[i + 1]
        elif a == "--mem":
            mem = argv[i + 1]
    directory = os.path.dirname(csv_path) or "."
    rows = []
    s = pairs.pairs_schema()
    kind, _, slow = scenario.partition(":")
    for metric, size in (("bw", 8388608), ("lat", 8)):
        for path in (("direct", "staged") if mem == "device" else ("direct",)):
            cells = matrix(8, kind, metric, slow=int(slow or 5))
            write_matrix(os.path.join(directory, "pairs-%s%d-%s.csv" % ("lat-" if metric == "lat" else "", size,
                                                                       path)), cells)
            for src in range(8):
                for dst in range(8):
                    if src != dst:
                        rows.append(row(s, benchmark="mpi_pairs", layer="mpi", mem=mem, path=path, reg="host",
                                        metric=metric, size_bytes=size, round=(dst - src) % 8, src_rank=src,
                                        dst_rank=dst, src_host="n%02d" % src, dst_host="n%02d" % dst,
                                        src_local_rank=0, dst_local_rank=0, src_gpu="", dst_gpu="",
                                        src_nic="mlx5_0", dst_nic="mlx5_0", iterations=10,
                                        bw_GBps=fmt(cells[src][dst]) if metric == "bw" else "",
                                        lat_us=fmt(cells[src][dst]) if metric == "lat" else "", status="ok",
                                        errors=0, nic_errors="", nic_packets="", note="seed 1",
                                        timestamp="2026-11-25T00:00:00Z",
                                        version="0.1.0"))
    write_ranks(directory, 8)
    with open(csv_path, "w") as f:
        f.write(s.header + "\n" + "".join(r + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(fake_binary(sys.argv[1:], os.environ.get("GDRB_FAKE_PAIRS", "healthy")))
