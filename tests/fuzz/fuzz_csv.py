#!/usr/bin/env python3
"""Fuzz the results CSV reader (gdrbtool.common.read_csv) and its readers in plot and report:
an input is one results.csv. Errors: Stop(2), one line "FILE:LINE: ..."."""

import os

import fuzzing

common, plot, report = fuzzing.modules("common", "plot", "report")


def read(data: bytes) -> None:
    path = fuzzing.write(os.path.join(fuzzing.workdir(), "results.csv"), data)
    for _ in common.read_csv(path):
        pass
    plot.read_data(path)
    report.read_results(path)


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(read, (2,)))
