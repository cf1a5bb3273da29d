"""Python 3.8 is the oldest the tool supports: every Python file of it (scripts/lib/gdrbtool,
tests/tooling/py, and each file in scripts/ whose first line runs python) parses as Python 3.8 (ast.parse
with feature_version) and calls nothing the 3.8 standard library lacks. The checker is shown to
catch a planted match statement, removeprefix and each other newer name it knows."""
import ast
import os
import unittest

import gdrbtest

# Names the 3.8 standard library lacks, with the Python that added them.
MODULES = {"tomllib": "3.11", "zoneinfo": "3.9", "graphlib": "3.9"}
MODULE_NAMES = {
    ("functools", "cache"): "3.9", ("math", "lcm"): "3.9", ("os", "waitstatus_to_exitcode"): "3.9",
    ("random", "randbytes"): "3.9", ("xml.etree.ElementTree", "indent"): "3.9", ("typing", "Annotated"): "3.9",
    ("asyncio", "to_thread"): "3.9", ("itertools", "pairwise"): "3.10", ("typing", "TypeAlias"): "3.10",
    ("typing", "ParamSpec"): "3.10", ("contextlib", "aclosing"): "3.10", ("contextlib", "chdir"): "3.11",
    ("datetime", "UTC"): "3.11", ("typing", "Self"): "3.11",
}
# Methods (of str, int, pathlib.Path) no 3.8 object has under these names.
METHODS = {"removeprefix": "3.9", "removesuffix": "3.9", "is_relative_to": "3.9", "with_stem": "3.9",
           "bit_count": "3.10", "hardlink_to": "3.10"}
KEYWORDS = {("zip", "strict"): "3.10", ("dataclass", "slots"): "3.10", ("dataclass", "kw_only"): "3.10"}
BUILTINS = {"aiter": "3.10", "anext": "3.10"}
GENERICS = {"list", "dict", "tuple", "set", "frozenset", "type"}     # list[int] at run time: 3.9


def python_files():
    files = []
    for d in (gdrbtest.SCRIPTS / "lib" / "gdrbtool", gdrbtest.SRC / "tests" / "tooling" / "py"):
        files += sorted(str(p) for p in d.glob("*.py"))
    for p in sorted(list(gdrbtest.SCRIPTS.iterdir()) + list((gdrbtest.SCRIPTS / "measure").iterdir())):
        if p.is_file():
            with open(str(p), "rb") as f:
                first = f.readline()
            if first.startswith(b"#!") and b"python" in first:
                files.append(str(p))
    return files


class Newer(ast.NodeVisitor):
    """What a module uses of Python after 3.8: (line, text) in PROBLEMS."""

    def __init__(self, tree):
        self.problems = []
        self.modules = {}            # local name -> module it names
        self.future_annotations = any(
            isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
            for n in tree.body)

    def newer(self, node, what, version):
        self.problems.append((node.lineno, "%s is Python %s" % (what, version)))

    def visit_Import(self, node):
        for a in node.names:
            top = a.name.split(".")[0]
            if top in MODULES:
                self.newer(node, "import " + a.name, MODULES[top])
            self.modules[a.asname or top] = a.name if a.asname else top
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if mod.split(".")[0] in MODULES:
            self.newer(node, "from %s import" % mod, MODULES[mod.split(".")[0]])
        for a in node.names:
            if (mod, a.name) in MODULE_NAMES:
                self.newer(node, "%s.%s" % (mod, a.name), MODULE_NAMES[(mod, a.name)])
            self.modules[a.asname or a.name] = "%s.%s" % (mod, a.name)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr in METHODS:
            self.newer(node, "." + node.attr, METHODS[node.attr])
        dotted = []
        v = node
        while isinstance(v, ast.Attribute):
            dotted.insert(0, v.attr)
            v = v.value
        if isinstance(v, ast.Name) and v.id in self.modules:
            mod = ".".join([self.modules[v.id]] + dotted[:-1])
            if (mod, node.attr) in MODULE_NAMES:
                self.newer(node, "%s.%s" % (mod, node.attr), MODULE_NAMES[(mod, node.attr)])
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        for k in node.keywords:
            if (name, k.arg) in KEYWORDS:
                self.newer(node, "%s(%s=...)" % (name, k.arg), KEYWORDS[(name, k.arg)])
        if name in BUILTINS and isinstance(f, ast.Name):
            self.newer(node, name + "()", BUILTINS[name])
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in GENERICS:
            self.newer(node, "%s[...] evaluated at run time" % node.value.id, "3.9")
        self.generic_visit(node)

    def annotation(self, node):
        """An annotation is not evaluated under 'from __future__ import annotations'."""
        if node is not None and not self.future_annotations:
            self.visit(node)

    def visit_arg(self, node):
        self.annotation(node.annotation)

    def visit_FunctionDef(self, node):
        for field in ("decorator_list", "body"):
            for n in getattr(node, field):
                self.visit(n)
        self.visit(node.args)
        self.annotation(node.returns)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node):
        self.annotation(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)


def problems(source, name):
    """Each use of Python after 3.8 in SOURCE, as NAME:LINE: what."""
    try:
        tree = ast.parse(source, name, feature_version=(3, 8))
    except SyntaxError as e:
        return ["%s:%s: syntax newer than Python 3.8 (or wrong): %s" % (name, e.lineno, e.msg)]
    v = Newer(tree)
    v.visit(tree)
    return ["%s:%d: %s" % (name, line, what) for line, what in sorted(v.problems)]


class Python38(unittest.TestCase):
    def test_every_file_is_python_38(self):
        files = python_files()
        names = {os.path.relpath(f, str(gdrbtest.SRC)) for f in files}
        for expected in ("scripts/gdrb", "scripts/measure/measure-omb", "scripts/lib/gdrbtool/sweep.py",
                         "tests/tooling/py/test_python38.py"):
            self.assertIn(expected, names)
        found = []
        for path in files:
            with open(path, "rb") as f:
                found += problems(f.read(), os.path.relpath(path, str(gdrbtest.SRC)))
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_planted_syntax_is_caught(self):
        match = "x = 1\nmatch x:\n    case 1:\n        pass\n"
        self.assertEqual(len(problems(match, "m.py")), 1)
        self.assertRegex(problems(match, "m.py")[0], r"^m\.py:[24]: syntax newer than Python 3\.8")
        star = "try:\n    pass\nexcept* ValueError:\n    pass\n"
        self.assertRegex(problems(star, "s.py")[0], r"^s\.py:[34]: syntax newer than Python 3\.8")
        # What 3.8 has is not flagged: :=, positional-only parameters, f-strings with =.
        self.assertEqual(problems("def f(a, /, b):\n    if (n := a):\n        return f'{n=}'\n", "ok.py"), [])

    def test_planted_library_calls_are_caught(self):
        cases = [
            ("s = 'ab'\nt = s.removeprefix('a')\n", "x.py:2: .removeprefix is Python 3.9"),
            ("s = 'ab'.removesuffix('b')\n", "x.py:1: .removesuffix is Python 3.9"),
            ("import functools\n@functools.cache\ndef f():\n    pass\n", "x.py:2: functools.cache is Python 3.9"),
            ("from functools import cache\n", "x.py:1: functools.cache is Python 3.9"),
            ("for a, b in zip([1], [2], strict=True):\n    pass\n", "x.py:1: zip(strict=...) is Python 3.10"),
            ("import tomllib\n", "x.py:1: import tomllib is Python 3.11"),
            ("import xml.etree.ElementTree as ET\nET.indent(None)\n",
             "x.py:2: xml.etree.ElementTree.indent is Python 3.9"),
            ("import xml.etree.ElementTree\nxml.etree.ElementTree.indent(None)\n",
             "x.py:2: xml.etree.ElementTree.indent is Python 3.9"),
            ("from xml.etree import ElementTree\nElementTree.indent(None)\n",
             "x.py:2: xml.etree.ElementTree.indent is Python 3.9"),
            ("from dataclasses import dataclass\n@dataclass(slots=True)\nclass C:\n    pass\n",
             "x.py:2: dataclass(slots=...) is Python 3.10"),
            ("x = list[int]()\n", "x.py:1: list[...] evaluated at run time is Python 3.9"),
            ("def f(a: dict[str, int]) -> None:\n    pass\n", "x.py:1: dict[...] evaluated at run time is Python 3.9"),
        ]
        for source, expected in cases:
            with self.subTest(source=source):
                self.assertEqual(problems(source, "x.py"), [expected])
        # Not evaluated under the future import; a list subscripted by an index is a list.
        self.assertEqual(problems("from __future__ import annotations\ndef f(a: dict[str, int]) -> list[int]:\n"
                                  "    x: tuple[int, ...] = (1,)\n    return [a, x][0]\n", "ok.py"), [])
        self.assertEqual(problems("def f(list_):\n    d = {}\n    return d['removeprefix'], list_[0]\n", "ok.py"), [])


if __name__ == "__main__":
    unittest.main()
