#!/usr/bin/env python3
"""Fuzz the profile parser (gdrbtool.profile.load): an input is one profile file; its includes
of shipped profiles are read as they are. Errors: Stop(2), one line "FILE:LINE: ..."."""

import os

import fuzzing

profile, = fuzzing.modules("profile")


def read(data: bytes) -> None:
    path = fuzzing.write(os.path.join(fuzzing.workdir(), "fuzz.profile"), data)
    profile.load(path)


if __name__ == "__main__":
    fuzzing.main(fuzzing.check(read, (2,)))
