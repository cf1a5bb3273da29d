#!/usr/bin/env python3
"""Fuzz the JSON reader (gdrbtool.common.Json, load_json) and what reads meta.json and
verdict.json through it: plot's titles, accept's port rates, report's sections (doctor.json is
kept, not read back: a seed of its form is read as any JSON). An input is one JSON file.
Errors: Stop(2), one line "FILE: not JSON: ..."."""

import os

import fuzzing

common, plot, accept, report = fuzzing.modules("common", "plot", "accept", "report")


def read(data: bytes) -> None:
    d = fuzzing.workdir()
    path = fuzzing.write(os.path.join(d, "meta.json"), data)
    plot.load_meta(path)
    j = common.load_json(path)
    accept.Judge([], "", None, j, d)
    r = report.Report(j, j, report.Results(), os.path.join(d, "plots"))
    r.build("fuzz")


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(read, (2,)))
