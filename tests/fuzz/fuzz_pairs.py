#!/usr/bin/env python3
"""Fuzz the all-pairs readers (gdrbtool.pairs: the matrix files, the rank table, pairs.csv) and
the analysis of what they read: an input is a results directory as "@@ NAME" sections (see
fuzzing.split_files), NAME one of the file names below. Errors: Stop(2), one line."""

import os

import fuzzing

pairs, = fuzzing.modules("pairs")

NAMES = ("pairs-8-direct.csv", "pairs-lat-8-direct.csv", "pairs-device-8388608-staged.csv",
         "pairs-ranks.csv", "pairs.csv")


def read(data: bytes) -> None:
    d = fuzzing.workdir()
    for name, text in fuzzing.split_files(data, NAMES).items():
        fuzzing.write(os.path.join(d, name), text)
    mats, ranks = pairs.load_dir(d)
    pairs.simulated_gpu(d)
    for m in mats:
        pairs.analyse(m, ranks, "median", 0.8 if m.metric == "bw" else 2.0)
        pairs.analyse(m, ranks, "best", 0.5 if m.metric == "bw" else 1.5)


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(read, (2,)))
