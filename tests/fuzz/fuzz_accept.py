#!/usr/bin/env python3
"""Fuzz the rule evaluator (gdrbtool.accept.Judge) end to end: an input is a results directory
and a profile as "@@ NAME" sections (see fuzzing.split_files): the profile's rules judge
results.csv, meta.json, the all-pairs matrices, the counter file and doctor.json (a suspect's
causes, the counters rule), and the verdict is written as JSON and as
JUnit XML, which must parse. Errors: Stop(2) or Stop(1), one line."""

import json
import os
import xml.etree.ElementTree as ET

import fuzzing

accept, common, profile = fuzzing.modules("accept", "common", "profile")

NAMES = ("rules.profile", "results.csv", "meta.json", "pairs-8388608-direct.csv", "pairs-lat-8-direct.csv",
         "pairs-ranks.csv", "pairs.csv", "results.counters.csv", "doctor.json")


def not_json(word: str) -> None:
    raise ValueError("%s is not JSON" % word)


def judge(data: bytes) -> None:
    d = fuzzing.workdir()
    files = fuzzing.split_files(data, NAMES)
    for name, text in files.items():
        fuzzing.write(os.path.join(d, name), text)
    if "rules.profile" not in files:
        return
    prof = profile.load(os.path.join(d, "rules.profile"))
    meta = common.load_json(os.path.join(d, "meta.json")) if "meta.json" in files else None
    csv_path = os.path.join(d, "results.csv") if "results.csv" in files else ""
    j = accept.Judge(prof.rules, csv_path, None, meta, d)
    if csv_path:
        j.read(common.read_csv(csv_path))
    verdict = j.finish()
    verdict.text()
    verdict.summary()
    text = verdict.json("rules", d, 0.0)
    try:
        json.loads(text, parse_constant=not_json)
    except ValueError as e:
        raise fuzzing.Broken("verdict.json is not JSON (%s): %r" % (e, text[:2000]))
    xml = verdict.junit("rules", 0.0)
    try:
        ET.fromstring(xml)
    except ET.ParseError as e:
        raise fuzzing.Broken("verdict.xml is not XML (%s): %r" % (e, xml[:2000]))


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(judge, (1, 2)))
