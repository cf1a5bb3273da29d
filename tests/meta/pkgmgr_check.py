#!/usr/bin/env python3
"""Check the HPC package recipes against configure.ac (tests/meta/pkgmgr.sh runs it).

  pkgmgr_check.py CONFIGURE_AC PACKAGE_PY EASYCONFIG_DIR

The Spack package (contrib/spack/packages/gdrbench/package.py): Python that parses; its
configure variants (the names configure_args loops over) are each a declared variant, an
AC_ARG_WITH of configure.ac and the condition of a dependency; every AC_ARG_WITH has one; every
other variant only conditions a run-time dependency; a version line for AC_INIT's version.
The EasyBuild easyconfig of AC_INIT's version (gdrbench-VERSION.eb): Python that parses, that
name and version, configopts naming only options configure.ac declares, sanity check commands
running gdrb --version and gdrb sweep. One line per problem on stderr, exit 1; exit 0 when clean.
"""

import ast
import re
import sys
from pathlib import Path


def configure_facts(text):
    version = re.search(r"^AC_INIT\(\[gdrbench\],\s*\[([^\]]+)\]", text, re.M)
    withs = re.findall(r"^AC_ARG_WITH\(\[([A-Za-z0-9_-]+)\]", text, re.M)
    enables = re.findall(r"^AC_ARG_ENABLE\(\[([A-Za-z0-9_-]+)\]", text, re.M)
    return (version.group(1) if version else None), withs, enables


def call_name(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def const(node):
    return node.value if isinstance(node, ast.Constant) else None


def keyword(call, name):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def check_package(path, version, withs):
    problems = []
    say = problems.append
    try:
        tree = ast.parse(Path(path).read_text(), path)
    except SyntaxError as e:
        return ["{}:{}: not Python: {}".format(path, e.lineno, e.msg)]
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(classes) != 1:
        return ["{}: expected one package class, found {}".format(path, len(classes))]
    cls = classes[0]
    if not any(isinstance(b, ast.Name) and b.id == "AutotoolsPackage" for b in cls.bases):
        say("{}: class {} is not an AutotoolsPackage".format(path, cls.name))
    variants, versions, deps = {}, [], []
    for stmt in cls.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        name = call_name(call)
        if name == "variant" and call.args:
            variants[const(call.args[0])] = stmt.lineno
        elif name == "version" and call.args:
            versions.append(const(call.args[0]))
        elif name == "depends_on" and call.args:
            when, kind = keyword(call, "when"), keyword(call, "type")
            deps.append((const(call.args[0]), const(when) if when is not None else None,
                         const(kind) if kind is not None else None))
    configured = None
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "configure_args":
            for node in ast.walk(fn):
                if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
                    configured = [const(e) for e in node.iter.elts]
    if configured is None:
        return problems + ["{}: configure_args loops over no tuple of variant names".format(path)]
    for name in configured:
        if name not in variants:
            say("{}: configure_args names '{}', which is not a variant".format(path, name))
        if name not in withs:
            say("{}: variant '{}' maps to --with-{}, which configure.ac does not declare (AC_ARG_WITH)".format(
                path, name, name))
        if not any(when == "+" + name for _, when, _ in deps):
            say("{}: variant '{}' conditions no depends_on(..., when=\"+{}\")".format(path, name, name))
    for name in withs:
        if name not in configured:
            say("{}: configure.ac's --with-{} has no variant in configure_args".format(path, name))
    for name, line in variants.items():
        if name in configured:
            continue
        uses = [(dep, kind) for dep, when, kind in deps if when == "+" + name]
        if not uses or any(kind != "run" for _, kind in uses):
            say("{}:{}: variant '{}' is neither a configure option nor only a run-time dependency".format(
                path, line, name))
    if version not in versions:
        say("{}: no version(\"{}\", sha256=...) for configure.ac's version (scripts/lib/set-release-checksum)".format(
            path, version))
    return problems


def check_easyconfig(directory, version, withs, enables):
    path = Path(directory) / "gdrbench-{}.eb".format(version)
    if not path.is_file():
        return ["{}: no easyconfig for configure.ac's version {}".format(path, version)]
    try:
        tree = ast.parse(path.read_text(), str(path))
    except SyntaxError as e:
        return ["{}:{}: not Python: {}".format(path, e.lineno, e.msg)]
    params = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                params[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except ValueError:
                params[stmt.targets[0].id] = None      # SYSTEM, SOURCE_TAR_GZ: EasyBuild's names
    problems = []
    say = problems.append
    for key in ("easyblock", "name", "version", "homepage", "description", "toolchain", "sources",
                "checksums", "sanity_check_paths", "sanity_check_commands", "moduleclass"):
        if key not in params:
            say("{}: no {}".format(path, key))
    if params.get("name") != "gdrbench" or params.get("version") != version:
        say("{}: name and version are {!r} {!r}, not 'gdrbench' {!r}".format(
            path, params.get("name"), params.get("version"), version))
    if params.get("easyblock") != "ConfigureMake":
        say("{}: easyblock is {!r}, not 'ConfigureMake'".format(path, params.get("easyblock")))
    for opt in str(params.get("configopts", "")).split():
        m = re.match(r"^--(with|without|enable|disable)-([A-Za-z0-9_-]+)(=.*)?$", opt)
        known = withs if m and m.group(1) in ("with", "without") else enables
        if not m or m.group(2) not in known:
            say("{}: configopts gives {}, which configure.ac does not declare".format(path, opt))
    commands = " ; ".join(str(c) for c in params.get("sanity_check_commands") or [])
    for needed in ("gdrb --version", "gdrb sweep"):
        if needed not in commands:
            say("{}: sanity_check_commands do not run {}".format(path, needed))
    return problems


def main(argv):
    if len(argv) != 4:
        print("usage: pkgmgr_check.py CONFIGURE_AC PACKAGE_PY EASYCONFIG_DIR", file=sys.stderr)
        return 2
    version, withs, enables = configure_facts(Path(argv[1]).read_text())
    if version is None or not withs:
        print("{}: no AC_INIT([gdrbench], [VERSION]) or no AC_ARG_WITH".format(argv[1]), file=sys.stderr)
        return 1
    problems = check_package(argv[2], version, withs) + check_easyconfig(argv[3], version, withs, enables)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
