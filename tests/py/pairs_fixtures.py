"""Made-up all-pairs results directories (the agreed formats of issue 12): matrix files, the
rank table and a few pairs.csv rows. Values are generated, never measured.

  write(DIR, n=8, scenario="healthy", ...)   one matrix (and pairs-ranks.csv) into DIR

Scenarios: healthy; node (rank SLOW's sends and receives at 42%); link (SRC -> DST at 40%, one
direction); link2 (both directions); rail (GPUS per node, GPU i pairs only with GPU i of the
others; rail SLOW at 45% on every node); lonely (rank SLOW measured only with rank PEER, both
directions, at 40%: it cannot be told from that link); missing (healthy, some cells empty).
"""
import os
import random

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


def write_ranks(directory, n, gpus=1):
    with open(os.path.join(directory, "pairs-ranks.csv"), "w") as f:
        f.write("rank,host,local_rank,gpu,nic\n")
        for r in range(n):
            f.write("%d,n%02d,%d,0000:%02x:00.0,mlx5_%d\n" % (r, r // gpus, r % gpus, 0x17 + r % gpus, r % gpus))


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
