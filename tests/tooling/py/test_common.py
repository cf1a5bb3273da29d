"""The shared pieces of scripts/gdrb: the CSV schema from its one definition, the results
CSV reader, sizes, awk's numbers, JSON as json.awk read it, the all-or-nothing writer, and the
profile parser."""
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import unittest
from unittest import mock

import gdrbtest  # noqa: F401  (sys.path)
from gdrbtool import common, profile


def temp_file(case, text, suffix):
    """A temporary file holding TEXT, removed when CASE's test ends; its path."""
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    case.addCleanup(os.unlink, path)
    return path


class SchemaTest(unittest.TestCase):
    def test_columns_come_from_the_definition(self):
        s = common.schema()
        self.assertEqual(s.columns[:4], ["benchmark", "layer", "mem", "path"])
        self.assertEqual(s.columns[-10:], ["version", "transport", "gdr_connections", "library", "placement",
                                           "timing", "calls_per_sync", "algorithm", "protocol", "channels"])
        # Version 1: the columns up to version; 2: up to library; 3 (this one): all.
        self.assertEqual((s.version, s.widths), (4, {1: len(s.columns) - 9, 2: len(s.columns) - 6, 3: len(s.columns) - 5,
                                                     4: len(s.columns)}))
        self.assertEqual(s.versions, {",".join(s.columns[:n]): v for v, n in s.widths.items()})
        self.assertIn("size_bytes", s.integer)
        self.assertIn("lat_p50_us", s.numeric)
        self.assertNotIn("lat_p50_us", s.integer)
        self.assertNotIn("reg", s.numeric)

    def test_fixtures_carry_that_header(self):
        """Every fixture run is of this version but v1-run, v2-run and v3-run, bad-run's rows as
        versions 1, 2 and 3 wrote them."""
        s = common.schema()
        for run in ("good-run", "bad-run", "slow-gdr-run", "nofigure-staged", "invalid-nan", "malformed-row"):
            with self.subTest(run=run), open(gdrbtest.DATA / run / "results.csv") as f:
                self.assertEqual(f.readline().rstrip("\n"), s.header)
        for v in (1, 2, 3):
            with self.subTest(v=v), open(gdrbtest.DATA / ("v%d-run" % v) / "results.csv") as f:
                self.assertEqual(s.versions.get(f.readline().rstrip("\n")), v)

    def test_docs_document_every_column_in_order(self):
        text = (gdrbtest.SRC / "docs" / "csv-schema.md").read_text()
        table = text[text.index("# The CSV schema"):text.index("## Pairs CSV")]
        names = []
        for cell in re.findall(r"^\| ([^|]*) \|", table, re.M):
            names += re.findall(r"`([A-Za-z0-9_]+)`", cell)
        cols = common.schema().columns
        # `lat_min_us` … `lat_max_us` names a run of columns by its ends.
        documented = [c for c in cols if c in names]
        missing = [c for c in cols if c not in names and not c.startswith("lat_")]
        self.assertEqual(missing, [])
        self.assertEqual(documented, [c for c in names if c in cols])

    def test_docs_document_every_pairs_column_in_order(self):
        text = (gdrbtest.SRC / "docs" / "csv-schema.md").read_text()
        table = text[text.index("## Pairs CSV"):]
        names = []
        for cell in re.findall(r"^\| ([^|]*) \|", table, re.M):
            names += re.findall(r"`([A-Za-z0-9_]+)`", cell)
        defined = (gdrbtest.SRC / "common" / "core" / "pairs_schema.def").read_text()
        cols = re.findall(r"^GDRB_PAIRS_COL\(([A-Za-z0-9_]+), [a-z]+\)$", defined, re.M)
        self.assertEqual(len(cols), 28)
        self.assertEqual(names, cols)

    def test_rank_table_from_its_definition(self):
        from gdrbtool import pairs
        ranks = pairs.ranks_schema()
        self.assertEqual((ranks.columns[0], len(ranks.columns), ranks.types["local_rank"]), ("rank", 5, "integer"))
        for doc in ("csv-schema.md", "pairs.md"):
            self.assertIn("`%s`" % ranks.header, (gdrbtest.SRC / "docs" / doc).read_text(), doc)
        # Another definition's lines are not read as this one's.
        with self.assertRaises(common.Stop):
            common.Schema(pairs.RANKS_SCHEMA_DEF)

    def test_value_fault(self):
        s = common.schema()
        self.assertEqual(s.value_fault("size_bytes", "4096"), "")
        self.assertNotEqual(s.value_fault("size_bytes", "8x"), "")
        self.assertNotEqual(s.value_fault("lat_p50_us", "nan"), "")
        self.assertNotEqual(s.value_fault("lat_p50_us", "-5"), "")
        self.assertEqual(s.value_fault("lat_p50_us", ""), "")
        self.assertEqual(s.value_fault("note", "anything"), "")

    def test_values_are_ascii_and_finite(self):
        """float() takes these; the binaries write none of them: each is a fault, never a number."""
        s = common.schema()
        for v in ("inf", "nan", "1e999", "1E3", "\uff11\uff12", "\u0661", "1_000", " 5", "5\n", "9" * 400,
                  "1." + "0" * 31, "9" * 5000):
            with self.subTest(v=v[:20]):
                self.assertNotEqual(s.value_fault("lat_p50_us", v), "")
                self.assertIsNone(common.decimal(v))
        for v in ("\uff11\uff12", "\u00b2", "5\n", "1_0", "9" * 21, "9" * 5000):
            with self.subTest(v=v[:20]):
                self.assertNotEqual(s.value_fault("size_bytes", v), "")
                self.assertIsNone(common.integer(v))
        self.assertIn("more than 20 digits", s.value_fault("size_bytes", "9" * 5000))
        self.assertEqual(s.value_fault("lat_p50_us", "9" * 30 + "." + "9" * 30), "")
        self.assertEqual(s.value_fault("size_bytes", "18446744073709551615"), "")
        self.assertEqual(common.integer("18446744073709551616"), None)


class GenCsvTest(unittest.TestCase):
    """tests/support/gen_csv.awk (the fixtures' generator) builds its rows by column name from the schema."""

    def gen(self, schema_def):
        tests = gdrbtest.SRC / "tests" / "support"
        return subprocess.run(["gawk", "-v", "schema_def=" + str(schema_def), "-f", str(tests / "schema.awk"),
                               "-f", str(tests / "gen_csv.awk"), "-v", "rows=60", "-v", "fault=1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)

    @unittest.skipUnless(shutil.which("gawk"), "gawk not installed")
    def test_rows_follow_the_schema_and_a_column_it_lacks_ends_it(self):
        s = common.schema()
        proc = self.gen(common.SCHEMA_DEF)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual((lines[0], len(lines)), (s.header, 61))
        for line in lines[1:]:
            f = dict(zip(s.columns, common.csv_split(line)))
            self.assertEqual(len(common.csv_split(line)), len(s.columns))
            self.assertEqual((f["status"], f["quality"], f["version"]), ("ok", "ok", "0.1.0"))
        # quality renamed in the definition: gen_csv.awk names it, and stops, exit 2.
        text = common.SCHEMA_DEF.read_text().replace("GDRB_CSV_COL(quality,", "GDRB_CSV_COL(verdict,")
        renamed = temp_file(self, text, ".def")
        proc = self.gen(renamed)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no column 'quality'", proc.stderr)


class ReadCsvTest(unittest.TestCase):
    def write(self, text):
        return temp_file(self, text, ".csv")

    def test_reads_quoted_fields(self):
        header = common.schema().header
        row = ["x"] * len(common.schema().columns)
        row[-3] = '"a, ""b"""'
        rows = list(common.read_csv(self.write(header + "\n" + ",".join(row) + "\n")))
        self.assertEqual(rows[0][0], 2)
        self.assertEqual(rows[0][1][-3], 'a, "b"')

    def refused(self, text):
        """read_csv's refusal of a file holding TEXT: exit 2, one line; its message."""
        path = self.write(text)
        with self.assertRaises(common.Stop) as cm:
            list(common.read_csv(path))
        self.assertEqual(cm.exception.status, 2)
        self.assertNotIn("\n", cm.exception.message)
        self.assertTrue(cm.exception.message.startswith(path + ":"), cm.exception.message)
        return cm.exception.message

    def test_refuses_another_header(self):
        s = common.schema()
        v1, v2 = (",".join(s.columns[:s.widths[v]]) for v in (1, 2))
        # No version's: another file, a column short of one, one more, one renamed.
        for header in ("a,b", s.header.rsplit(",", 2)[0], v1.rsplit(",", 1)[0], s.header + ",extra",
                       v1 + ",transport", v2 + ",place", s.header.replace(",library", ",libraries"), ""):
            with self.subTest(header=header[-30:]):
                self.assertRegex(self.refused(header + "\n1,2\n"), r":1: not a gdrbench results CSV")

    def test_refuses_a_short_row_naming_its_line(self):
        self.assertRegex(self.refused(common.schema().header + "\na,b\n"),
                         r":2: has 2 fields, the schema has %d$" % len(common.schema().columns))

    def test_reads_older_versions_with_the_newer_columns_empty(self):
        s = common.schema()
        for v in (1, 2, 3):
            n = s.widths[v]
            row = ["x%d" % i for i in range(n)]
            row[s.index["note"]] = '"a, ""b"""'
            rows = list(common.read_csv(self.write(",".join(s.columns[:n]) + "\r\n" + ",".join(row) + "\r\n"
                                                   + ",".join(row) + "\n")))
            with self.subTest(v=v):
                self.assertEqual([n for n, _ in rows], [2, 3])
                for _, fields in rows:
                    self.assertEqual(len(fields), len(s.columns))
                    f = dict(zip(s.columns, fields))
                    self.assertEqual((f["benchmark"], f["note"], f["version"]),
                                     ("x0", 'a, "b"', "x%d" % s.index["version"]))
                    lib = [f[c] for c in ("transport", "gdr_connections", "library")]
                    self.assertEqual(lib, ["" if v == 1 else "x%d" % s.index[c]
                                           for c in ("transport", "gdr_connections", "library")])
                    self.assertEqual(f["placement"], "" if v < 3 else "x%d" % s.index["placement"])
                    self.assertEqual([f[c] for c in ("timing", "calls_per_sync", "algorithm", "protocol", "channels")],
                                     [""] * 5)

    def test_reads_the_older_fixtures_as_their_twin_of_this_version(self):
        """v1-run, v2-run and v3-run are bad-run as versions 1, 2 and 3 wrote it: the same rows,
        the newer columns empty."""
        now = list(common.read_csv(str(gdrbtest.DATA / "bad-run" / "results.csv")))
        self.assertEqual(len(now), 476)
        for v in (1, 2, 3):
            with self.subTest(v=v):
                self.assertEqual(list(common.read_csv(str(gdrbtest.DATA / ("v%d-run" % v) / "results.csv"))), now)

    def test_refuses_an_older_row_of_another_field_count(self):
        s = common.schema()
        for v in (1, 2, 3):
            n = s.widths[v]
            header, row = ",".join(s.columns[:n]), ",".join(["x"] * n)
            # A row short of its version's, and a newer version's row: each named with its line.
            for bad in (row.rsplit(",", 1)[0], row + "," * (len(s.columns) - n)):
                with self.subTest(v=v, fields=bad.count(",") + 1):
                    self.assertRegex(self.refused(header + "\n" + row + "\n" + bad + "\n"),
                                     r":3: has %d fields, version %d of the schema has %d$"
                                     % (bad.count(",") + 1, v, n))
            # An older version's row in a file of this version.
            self.assertRegex(self.refused(s.header + "\n" + row + "\n"),
                             r":2: has %d fields, the schema has %d$" % (n, len(s.columns)))


class CsvTextTest(unittest.TestCase):
    def test_a_formula_opens_as_text_as_the_binaries_write_it(self):
        # The same cases as tests/unit/test_report.c's field_quoting: both write one form.
        for text, field in (("=1+1", "'=1+1"), ("-2", "'-2"), ("+x", "'+x"), ("@SUM(A1)", "'@SUM(A1)"),
                            ("\tx", "'\tx"), ("\rx,y", '"\' x,y"'),
                            ('=HYPERLINK("u","v")', '"\'=HYPERLINK(""u"",""v"")"'),
                            ("a=b-c", "a=b-c"), ("'=already", "'=already"), ("", "")):
            with self.subTest(text=text):
                self.assertEqual(common.csv_text(text), field)


class SizesTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(common.size_parse("8"), 8)
        self.assertEqual(common.size_parse("64K"), 65536)
        self.assertEqual(common.size_parse("1MiB"), 1 << 20)
        self.assertEqual(common.size_parse("2g"), 2 << 30)
        for bad in ("0", "8x", "-1", "", "1.5K", "8\n", "\uff18", "1_024", "9" * 5000, "16777216T",
                    "18446744073709551616"):
            self.assertEqual(common.size_parse(bad), -1, bad[:20])
        self.assertEqual(common.size_parse("16777215T"), 16777215 << 40)
        self.assertIsNone(common.sizes_expand("8:" + "9" * 5000))

    def test_expand(self):
        self.assertEqual(common.sizes_expand("8:64"), [8, 16, 32, 64])
        self.assertEqual(common.sizes_expand("8:100"), [8, 16, 32, 64, 100])
        self.assertEqual(common.sizes_expand("8,1K"), [8, 1024])
        self.assertIsNone(common.sizes_expand("64:8"))
        self.assertIsNone(common.sizes_expand("8:4:2"))

    def test_fmt(self):
        self.assertEqual(common.size_fmt(8), "8B")
        self.assertEqual(common.size_fmt(4096), "4KiB")
        self.assertEqual(common.size_fmt(3 << 30), "3GiB")
        self.assertEqual(common.size_fmt(1536), "1536B")


class AwkTest(unittest.TestCase):
    def test_awk_num_prints_integers_whole_at_any_size(self):
        self.assertEqual([common.awk_num(v) for v in (45.0, 47.5, 0.0001234567, 1e30, 123456789.5)],
                         ["45", "47.5", "0.000123457", "1000000000000000019884624838656", "1.23457e+08"])

    def test_awk_value_is_the_leading_number(self):
        self.assertEqual([common.awk_value(v) for v in ("8", " 1.5x", "-2e3", "abc", "", ".5")],
                         [8.0, 1.5, -2000.0, 0.0, 0.0, 0.5])

    SPLIT_CASES = ('a,"b,""c""",d', 'a,b"c,d"e', "", ",,", '"",x,""""', 'a,"gpu ""H100"", 80GB",z')

    def test_csv_split_reads_quotes_as_the_awk_splitter_does(self):
        self.assertEqual(common.csv_split('a,"b,""c""",d'), ["a", 'b,"c"', "d"])
        self.assertEqual(common.csv_split('a,b"c,d"e'), ["a", "bc,de"])
        self.assertEqual(common.csv_split(""), [""])
        # The test suite's awk splitter (tests/support/csv_split.awk): the same fields, line for line.
        prog = '{ n = csv_split($0, f); s = n; for (i = 1; i <= n; i++) s = s "|" f[i]; print s }'
        out = subprocess.run(["awk", "-f", str(gdrbtest.SRC / "tests" / "support" / "csv_split.awk"), "-f",
                              temp_file(self, prog, ".awk")],
                             input="".join(c + "\n" for c in self.SPLIT_CASES), stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout.splitlines()
        for case, line in zip(self.SPLIT_CASES, out):
            fields = common.csv_split(case)
            self.assertEqual(line, "|".join([str(len(fields))] + fields), case)
        self.assertEqual(len(out), len(self.SPLIT_CASES))


class JsonTest(unittest.TestCase):
    def test_read_as_written(self):
        j = common.Json(json.loads('{"a": [1, null, "x"], "b": {"c": true}}', parse_int=str))
        self.assertEqual([j.text("a", i) for i in range(j.count("a"))], ["1", "null", "x"])
        self.assertEqual(j.j("a", 1), "")
        self.assertEqual(j.text("b"), "")
        self.assertEqual(j.text("b", "c"), "true")
        self.assertEqual(j.at("b").text("c"), "true")
        self.assertEqual(j.count("b"), 0)
        self.assertTrue(j.is_array("a"))
        self.assertFalse(j.is_array("b"))
        self.assertEqual(j.text("missing", 3), "")

    def test_load_keeps_numbers_and_refuses_nan(self):
        path = temp_file(self, '{"rate": 400.0, "s": "a\\bb"}', ".json")
        self.assertEqual(common.load_json(path).text("rate"), "400.0")
        self.assertEqual(common.load_json(path).text("s"), "a b")
        with open(path, "w") as f:
            f.write('{"rate": NaN}')
        with self.assertRaises(common.Stop) as cm:
            common.load_json(path)
        self.assertEqual(cm.exception.status, 2)
        self.assertRegex(cm.exception.message, r"\.json: not JSON: unexpected 'N'")

    def test_deep_and_huge_json_is_refused_or_kept_as_written(self):
        path = temp_file(self, "", ".json")
        for text in ('{"nodes": ' + "[" * 100000 + "]" * 100000 + "}", "[" * 100000):
            with open(path, "w") as f:
                f.write(text)
            with self.assertRaises(common.Stop) as cm:
                common.load_json(path)
            self.assertEqual(cm.exception.status, 2)
            self.assertIn("not JSON: ", cm.exception.message)
        with open(path, "w") as f:
            f.write('{"n": %s}' % ("9" * 5000))      # past int()'s 4300 digits: kept as written
        self.assertEqual(common.load_json(path).text("n"), "9" * 5000)


class TerminalTest(unittest.TestCase):
    def test_say_never_passes_control_characters(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            common.say("bad value '\x1b[2J\x1b]0;t\x07\x9bA\nB\tC' in x.csv")
        self.assertEqual(err.getvalue(), "%s: bad value '?[2J?]0;t??A?B?C' in x.csv\n" % common.prog)

    def test_a_refusal_is_one_line(self):
        # A profile word with a CR in it, quoted back by the refusal (found by tests/fuzz/profile.sh).
        e = common.usage_error("x.profile:1: rule r: 'a\rb' is not a benchmark name\n\x1b[2J")
        self.assertEqual(e.message, "x.profile:1: rule r: 'a?b' is not a benchmark name??[2J")
        self.assertEqual(str(e), e.message)


class WriteAllTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write_all(self, files):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                common.write_all(files)
                status = 0
            except common.Stop as e:
                status = e.status
        return status, err.getvalue()

    def test_writes_every_file(self):
        a, b = os.path.join(self.dir, "a"), os.path.join(self.dir, "b")
        self.assertEqual(self.write_all([(a, "text\n"), (b, b"\x89PNG")]), (0, ""))
        with open(a) as f:
            self.assertEqual(f.read(), "text\n")
        with open(b, "rb") as f:
            self.assertEqual(f.read(), b"\x89PNG")
        self.assertEqual(sorted(os.listdir(self.dir)), ["a", "b"])

    def test_writes_none_when_one_fails_and_says_it_once(self):
        a, b = os.path.join(self.dir, "a"), os.path.join(self.dir, "no", "b")
        status, err = self.write_all([(a, "new"), (b, "new")])
        self.assertEqual(status, 1)
        self.assertEqual(err, "%s: cannot write: No such file or directory\n" % b)
        self.assertEqual(os.listdir(self.dir), [])

    def victim(self):
        """A file outside the output directory that a planted link points to."""
        outside = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, outside)
        path = os.path.join(outside, "victim")
        with open(path, "w") as f:
            f.write("precious")
        return path

    def assertUntouched(self, victim):
        with open(victim) as f:
            self.assertEqual(f.read(), "precious")

    def test_a_link_at_the_target_is_refused_never_followed(self):
        victim = self.victim()
        a, link = os.path.join(self.dir, "a"), os.path.join(self.dir, "verdict.json")
        os.symlink(victim, link)
        status, err = self.write_all([(a, "new"), (link, "through")])
        self.assertEqual(status, 1)
        self.assertEqual(err, "%s: cannot write: a symbolic link (never followed; remove it or choose another "
                              "file)\n" % link)
        self.assertUntouched(victim)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(sorted(os.listdir(self.dir)), ["verdict.json"])
        dangling = os.path.join(self.dir, "dangling")
        os.symlink(os.path.join(os.path.dirname(victim), "new-file"), dangling)
        self.assertEqual(self.write_all([(dangling, "x")])[0], 1)
        self.assertEqual(os.listdir(os.path.dirname(victim)), ["victim"])

    def test_planted_temporary_names_are_not_followed(self):
        victim = self.victim()
        target = os.path.join(self.dir, "summary.md")
        for name in ("summary.md.tmp", ".summary.md.tmp", "summary.md~"):
            os.symlink(victim, os.path.join(self.dir, name))
        self.assertEqual(self.write_all([(target, "new")]), (0, ""))
        self.assertUntouched(victim)
        with open(target) as f:
            self.assertEqual(f.read(), "new")
        self.assertEqual(len(os.listdir(self.dir)), 4)

    def test_not_a_regular_file_is_refused(self):
        fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(fifo)
        os.mkdir(os.path.join(self.dir, "d"))
        for path in (fifo, os.path.join(self.dir, "d")):
            status, err = self.write_all([(path, "x")])
            self.assertEqual((status, err), (1, "%s: cannot write: not a regular file (remove it or choose another "
                                                "file)\n" % path))
        self.assertEqual(sorted(os.listdir(self.dir)), ["d", "fifo"])

    def test_text_with_lone_surrogates_is_written(self):
        a = os.path.join(self.dir, "a")
        self.assertEqual(self.write_all([(a, "x\udcffy")]), (0, ""))
        with open(a, "rb") as f:
            self.assertEqual(f.read(), b"x\xffy")       # as it was read (surrogateescape)
        self.assertEqual(self.write_all([(a, "x\udcff\ud800y")]), (0, ""))
        with open(a, "rb") as f:
            self.assertEqual(f.read(), b"x??y")

    def test_open_new_append_and_make_dir_refuse_links(self):
        victim = self.victim()
        link = os.path.join(self.dir, "log")
        os.symlink(victim, link)
        for opener in (common.open_new, common.open_append):
            with self.assertRaises(common.Refused if opener is common.open_new else OSError):
                opener(link)
        self.assertUntouched(victim)
        fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(fifo)
        with self.assertRaises(OSError):
            common.open_append(fifo)         # no reader: not waited on
        log = os.path.join(self.dir, "plain")
        with common.open_new(log) as f:
            f.write(b"one\n")
        with common.open_append(log) as f:
            f.write(b"two\n")
        with common.open_new(log) as f:
            f.write(b"three\n")
        with open(log, "rb") as f:
            self.assertEqual(f.read(), b"three\n")
        os.symlink(os.path.dirname(victim), os.path.join(self.dir, "logs"))
        with self.assertRaises(common.Refused):
            common.make_dir(os.path.join(self.dir, "logs"))
        common.make_dir(os.path.join(self.dir, "new"))
        common.make_dir(os.path.join(self.dir, "new"))
        self.assertTrue(os.path.isdir(os.path.join(self.dir, "new")))


class ProfileTest(unittest.TestCase):
    def load_text(self, text):
        path = temp_file(self, text, ".profile")
        return profile.load(path), path

    def refused(self, text, pattern):
        with self.assertRaises(common.Stop) as cm:
            self.load_text(text)
        self.assertEqual(cm.exception.status, 2)
        self.assertRegex(cm.exception.message, pattern)

    def test_shipped_profiles_load(self):
        for f in sorted(common.PROFILES.glob("*.profile")):
            p = profile.load(str(f))
            self.assertTrue(p.runs, f.name)
        ndr = profile.load(common.resolve_profile("ib-ndr400"))
        self.assertTrue(any(r.kind == "link" for r in ndr.rules))

    def test_run_defaults_and_include_scope(self):
        p, _ = self.load_text("sizes 8:64\nrun gdrb_mpi_bw mem=host,device\nrun gdrb_write_bw needs=rdma\n")
        # The layer is the binary's (--describe), asked when the sweep plans: "" until then.
        self.assertEqual([(r.bench, r.layer, r.sizes) for r in p.runs],
                         [("mpi_bw", "", "8:64"), ("write_bw", "", "8:64")])

    def test_rule_units_and_sizes(self):
        p, _ = self.load_text("run gdrb_mpi_bw\nrule r mpi_bw bw_GBps >= 400 Gb/s sizes=1M:\n"
                              "rule q mpi_bw lat_p50_us <= 2 ms sizes=8,64K\n")
        r, q = p.rules
        self.assertEqual((r.kind, r.value, r.filters["sizes"]), ("abs", 50.0, "1048576:inf"))
        self.assertEqual((q.value, q.filters["sizes"], q.filters["pair"]), (2000.0, "8,65536", "all"))

    def test_bad_profiles_name_file_and_line(self):
        self.refused("run gdrb_mpi_bw\nrule r mpi_bw bandwidth >= 1\n", r"\.profile:2: rule r: unknown column")
        self.refused("run gdrb_mpi_bw\nrule r nosuch_bw bw_GBps >= 1\n", r"benchmark 'nosuch_bw' is not run")
        self.refused("run gdrb_mpi_bw\nrule r mpi_bw bw_GBps >= 1 us\n", r"unit 'us' does not fit bw_GBps")
        self.refused("run gdrb_mpi_bw\nrule r mpi_bw bw_GBps >= 1e3\n", r"threshold '1e3'")
        self.refused("run gdrb_mpi_bw mem=GPU\n", r":1: mem=: expected a comma list of lower-case names")
        self.refused('run gdrb_mpi_bw args="-x\n', r'unterminated "quote"')
        self.refused("include nosuch-profile\n", r":1: include: cannot read")
        self.refused("rule a mpi_bw bw_GBps >= 1\nrule a mpi_bw bw_GBps >= 2\nrun gdrb_mpi_bw\n",
                     r":2: rule name 'a' already used at .*:1")

    def test_include_loop_is_refused(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "a.profile"), "w") as f:
            f.write("include ./a.profile\n")
        with self.assertRaises(common.Stop) as cm:
            profile.load(os.path.join(d, "a.profile"))
        self.assertRegex(cm.exception.message, "nest deeper than 8")

    def test_run_and_doctor_name_a_gdrbench_binary_never_a_path(self):
        for line in ("doctor /bin/sh", "doctor sh", "doctor ../gdrb_doctor", 'doctor bash args="-c id"',
                     "run /usr/bin/env", "run bash launch=local", "run ..", "run gdrb_mpi_bw/../../x"):
            with self.subTest(line=line):
                self.refused("run gdrb_mpi_bw\n" + line + "\n", r"\.profile:2: (run|doctor): '.*' is not a "
                             r"gdrbench binary name; expected gdrb_NAME")
        p, _ = self.load_text("doctor gdrb_doctor\nrun gdrb_mpi_bw\n")
        self.assertEqual(p.doctors[0].binary, "gdrb_doctor")

    def test_include_takes_regular_files_only_and_never_blocks(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        fifo = os.path.join(d, "fifo.profile")
        os.mkfifo(fifo)

        def timed_out(signum, frame):
            raise AssertionError("blocked reading a FIFO")
        old = signal.signal(signal.SIGALRM, timed_out)
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        self.addCleanup(signal.alarm, 0)
        for target, why in ((fifo, "not a regular file"), ("/dev/null", "not a regular file"),
                            (d, "not a regular file"), (os.path.join(d, "none"), "No such file or directory")):
            with self.subTest(target=target):
                signal.alarm(5)
                self.refused("include %s\nrun gdrb_mpi_bw\n" % target,
                             r"\.profile:1: include: cannot read '%s': %s$" % (re.escape(target), why))
        signal.alarm(5)
        with self.assertRaises(common.Stop) as cm:
            profile.load(fifo)      # the profile itself
        signal.alarm(0)
        self.assertEqual(cm.exception.message, "%s: cannot read this profile: not a regular file" % fifo)
        big = os.path.join(d, "big.profile")
        with open(big, "w") as f:
            f.write("# x\n" * (profile.MAX_BYTES // 4 + 1))
        self.refused("include %s\n" % big, r":1: include: cannot read .*: larger than 1048576 bytes")

    def test_include_fan_out_is_bounded_in_all(self):
        """Each level includes the next three times: 3^7 includes within the depth bound."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for k in range(7):
            with open(os.path.join(d, "l%d.profile" % k), "w") as f:
                f.write("include ./l%d.profile\n" % (k + 1) * 3)
        with open(os.path.join(d, "l7.profile"), "w") as f:
            f.write("run gdrb_mpi_bw\n")
        with self.assertRaises(common.Stop) as cm:
            profile.load(os.path.join(d, "l0.profile"))
        self.assertEqual(cm.exception.status, 2)
        self.assertRegex(cm.exception.message, r"l\d\.profile:\d: more than 64 includes in all")

    def test_numbers_are_finite_plain_decimals(self):
        huge = "9" * 400
        run = "run gdrb_mpi_bw\nrun gdrb_mpi_pairs\n"
        for line, pattern in (
                ("rule r mpi_bw bw_GBps >= %s" % huge, r"threshold '9{40}\.\.\.': expected a number"),
                ("rule r mpi_bw lat_p50_us <= %s us" % huge, r"threshold '9{40}\.\.\.'"),
                ("rule r mpi_bw bw_GBps >= %s%% of link" % huge, r"threshold"),
                ("rule r mpi_bw bw_GBps >= 1.%s" % ("0" * 31), r"threshold"),
                ("rule r mpi_bw bw_GBps >= \uff11\uff12", r"threshold"),       # fullwidth digits
                ("rule r mpi_bw bw_GBps >= 1_000", r"threshold"),
                ("rule r mpi_bw bw_GBps >= inf", r"threshold"),
                ("rule r mpi_bw bw_GBps >= nan", r"threshold"),
                ("rule r mpi_bw bw_GBps >= 1e999", r"threshold"),
                ("rule r mpi_bw bw_GBps >= 1 sizes=%s:" % ("9" * 5000), r"sizes="),
                ("rule r mpi_bw bw_GBps >= 1 sizes=8,%s" % ("1" * 5000), r"sizes="),
                ("rule r mpi_bw bw_GBps >= 1 sizes=%sK" % ("9" * 18), r"sizes="),      # past a size_t
                ("pairs lat above=%sxbest" % huge, r"above= expects"),
                ("pairs bw below=80%%median node=%s%%" % ("5" * 5000), r"node= expects"),
                ("pairs bw below=80%%median size=%s" % ("8" * 5000), r"size="),
                ("sizes %s" % ("9" * 5000), r"sizes: '9{40}\.\.\.' is not a size list"),
                ("time %s" % huge, r"time: expected seconds"),
                ("iters %s" % ("9" * 5000), r"iters: expected"),
                ("run gdrb_mpi_bibw np=%s" % ("2" * 5000), r"np=: expected"),
                ("run gdrb_mpi_bibw time=%s" % huge, r"time=: expected")):
            with self.subTest(line=line[:60]):
                with self.assertRaises(common.Stop) as cm:
                    self.load_text(run + line + "\n")
                self.assertEqual(cm.exception.status, 2)
                self.assertRegex(cm.exception.message, r"\.profile:3: .*" + pattern)
                self.assertLess(len(cm.exception.message), 1000)
        p, _ = self.load_text(run + "rule r mpi_bw bw_GBps >= %s\npairs lat above=2.5xbest\n" % ("9" * 30))
        self.assertEqual((p.rules[0].value, p.rules[1].value), (1e30 - 1, 2.5))


if __name__ == "__main__":
    unittest.main()


class DispatchTest(unittest.TestCase):
    """scripts/gdrb itself: a missing or unknown subcommand is one line and exit 2."""

    def run_gdrb(self, *args):
        import subprocess
        return subprocess.run([str(gdrbtest.GDRB)] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)

    def test_no_subcommand(self):
        r = self.run_gdrb()
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertRegex(r.stderr, r"^gdrb: expected a subcommand: sweep, plot, accept, report, inventory, rails; see --help\n$")

    def test_an_unforeseen_error_is_one_line_and_exit_1(self):
        """The last resort of scripts/gdrb: whatever a subcommand raises is one line, never a
        traceback."""
        from gdrbtool import accept, cli
        for exc in (RuntimeError("boom\nsecond line"), RecursionError("maximum recursion depth exceeded"),
                    ValueError("x" * 1000), KeyError()):
            with self.subTest(exc=type(exc).__name__):
                err = io.StringIO()
                with mock.patch.object(accept, "main", side_effect=exc), contextlib.redirect_stderr(err):
                    status = cli.main(["accept", "x", "y"], "")
                self.assertEqual(status, 1)
                self.assertEqual(err.getvalue().count("\n"), 1, err.getvalue())
                self.assertRegex(err.getvalue(), r"^gdrb-accept: internal error: %s" % type(exc).__name__)
                self.assertLess(len(err.getvalue()), 400)

    def test_a_reader_gone_from_stdout_is_exit_1_in_silence(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copytree(str(gdrbtest.DATA / "good-run"), os.path.join(d, "r"))
        for args in (["accept", os.path.join(d, "r"), "gdr-effectiveness"], ["--help"], ["accept", "--help"]):
            with self.subTest(args=args[:2]):
                proc = subprocess.Popen([str(gdrbtest.GDRB)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                proc.stdout.close()
                err = proc.stderr.read().decode()
                proc.stderr.close()
                self.assertEqual(proc.wait(), 1, err)
                self.assertNotIn("Traceback", err)
                self.assertNotIn("Exception ignored", err)

    def test_non_utf8_names_in_any_locale(self):
        """A results directory whose name is not UTF-8, in the C locale without UTF-8 mode and
        with a terminal in EUC-JP: the verdict, summary and report are written (valid UTF-8
        JSON), and nothing raises."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        run = os.path.join(d.encode(), b"run-\xff\xa4\xa2")
        shutil.copytree(str(gdrbtest.DATA / "good-run").encode(), run)
        for env in ({"LC_ALL": "C", "PYTHONUTF8": "0"}, {"PYTHONIOENCODING": "euc_jp"},
                    {"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "ascii"}):
            for args in ([b"accept", run, b"gdr-effectiveness"], [b"report", run], [b"plot", run]):
                with self.subTest(env=env, sub=args[0]):
                    ran = subprocess.run([os.fsencode(str(gdrbtest.GDRB))] + args, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=dict(os.environ, **env))
                    self.assertNotIn(b"Traceback", ran.stderr)
                    self.assertNotIn(b"internal error", ran.stderr)
                    self.assertIn(ran.returncode, (0, 1) if args[0] == b"plot" else (0,), ran.stderr)
                    self.assertIn(run, ran.stderr)       # the name as its bytes
        with open(os.path.join(run, b"verdict.json"), "rb") as f:
            verdict = json.loads(f.read().decode("utf-8"), parse_constant=lambda w: 1 / 0)
        self.assertIn("\ufffd", verdict["results"])

    def test_unknown_subcommand(self):
        r = self.run_gdrb("bogus")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1)
        self.assertIn("unknown subcommand 'bogus'", r.stderr)

    def test_help(self):
        r = self.run_gdrb("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("gdrb accept", r.stdout)
