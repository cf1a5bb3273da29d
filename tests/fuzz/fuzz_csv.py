#!/usr/bin/env python3
"""Fuzz the results CSV reader (gdrbtool.common.read_csv) and its readers in plot, report and p2p:
an input is one results.csv. Errors: Stop(2), one line "FILE:LINE: ..."."""

import os

import fuzzing

common, p2p, plot, report = fuzzing.modules("common", "p2p", "plot", "report")


def read(data: bytes) -> None:
    path = fuzzing.write(os.path.join(fuzzing.workdir(), "results.csv"), data)
    for _ in common.read_csv(path):
        pass
    plot.read_data(path)
    report.read_results(path)
    p2p.read(path, lambda line, column, value, why: None)


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(read, (2,)))
