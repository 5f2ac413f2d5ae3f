#!/usr/bin/env python3
"""The docs name only files and symbols that exist.

    docs_refs.py SOURCE_DIR

Reads README.md, CONTRIBUTING.md and docs/*.md. In their code spans (`...`) it finds
  - repository paths (src/..., tests/..., cli/..., docs/..., include/..., scripts/...,
    bench/..., web/..., cmake/..., examples/..., abi/...): each must exist (a '*' is a
    glob that must match something);
  - bare source file names (name.c, name.h, name.lua, name.sh, name.py): a file of that
    name must exist somewhere in the tracked tree;
  - C symbols with cwork's prefixes (cwork_*, cw_*, CWORK_*, CW_*), with or without
    "()": each must occur in a tracked source file (.c, .h, .lua, .txt, .cmake) — a
    renamed function leaves no stale name behind in the docs.
Names of things that are not in the tree on purpose are skipped: generated files
(scripts.h, scripts.c, web_assets.*), system headers, placeholders (<...>, ...), a
path that names a build directory, command lines (`cwork ...`) and JSON values.

Before the real tree, the check runs on a small tree with known offenders, so that a
check that finds nothing cannot pass by accident. Exit 0 passed, 1 failed.
"""
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

ROOTS = ("src", "tests", "cli", "docs", "include", "scripts", "bench", "web", "cmake",
         "examples", "abi")
GENERATED = {"scripts.h", "scripts.c", "web_assets.h", "web_assets.c"}
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*-]*[\w*])" % "|".join(ROOTS))
BARE = re.compile(r"(?<![\w./-])([A-Za-z_][\w-]*\.(?:c|h|lua|sh|py))(?![\w.])")
SYMBOL = re.compile(r"(?<![\w.])((?:cwork|cw|CWORK|CW)_[A-Za-z0-9_]*[A-Za-z0-9])(?![\w<*])")
SOURCE_EXT = (".c", ".h", ".lua", ".txt", ".cmake", ".map", ".sh", ".py", ".js", ".in")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "node_modules") and
                   not x.startswith("build")]
        found += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return found


def docs_of(root, files):
    return [f for f in files if f in ("README.md", "CONTRIBUTING.md") or
            (f.startswith("docs/") and f.endswith(".md"))]


def check_tree(root):
    files = tracked_files(root)
    fileset = set(files)
    dirs = {os.path.dirname(f) for f in files}
    for f in list(dirs):
        while f:
            f = os.path.dirname(f)
            dirs.add(f)
    basenames = {os.path.basename(f) for f in files}
    text = ""
    for f in files:
        if f.endswith(SOURCE_EXT) and "node_modules" not in f:
            try:
                text += open(os.path.join(root, f), errors="replace").read() + "\n"
            except OSError:
                pass
    symbols = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    bad = []
    for doc in docs_of(root, files):
        for lineno, line in enumerate(open(os.path.join(root, doc)), 1):
            for span in SPAN.findall(line):
                if "<" in span or "..." in span or "…" in span:
                    continue
                # A command line or a JSON value names no file of the tree.
                if span.startswith("cwork ") or "{" in span or '"' in span:
                    continue
                for path in PATH.findall(span):
                    p = path.rstrip("/.")
                    if "build" in p.split("/")[0:1]:
                        continue
                    if os.path.basename(p) in GENERATED:
                        continue
                    if "*" in p:
                        ok = any(fnmatch.fnmatch(f, p) for f in files)
                    else:
                        ok = p in fileset or p in dirs
                    if not ok:
                        bad.append("%s:%d: no such file: %s" % (doc, lineno, p))
                for name in BARE.findall(span):
                    if "/" in span and PATH.search(span):
                        continue
                    system = os.path.exists(os.path.join("/usr/include", name))
                    if name not in basenames and name not in GENERATED and not system:
                        bad.append("%s:%d: no file named %s" % (doc, lineno, name))
                for sym in SYMBOL.findall(span):
                    if sym not in symbols:
                        bad.append("%s:%d: no such symbol: %s" % (doc, lineno, sym))
    return bad


def self_test():
    """A tree with one offender of each kind beside names that exist."""
    with tempfile.TemporaryDirectory(prefix="cwork-docs-refs-") as t:
        os.makedirs(os.path.join(t, "src", "pool"))
        os.makedirs(os.path.join(t, "docs"))
        open(os.path.join(t, "src", "pool", "commit.c"), "w").write(
            "int cw_commit_jobs(void);\n#define CWORK_OK 0\n")
        open(os.path.join(t, "docs", "A.md"), "w").write(
            "fine: `src/pool/commit.c`, `commit.c`, `cw_commit_jobs()`, `CWORK_OK`,\n"
            "`src/pool/*.c`, `src/pool`, `scripts.h`, `<p>cw_thing_<name>`\n"
            "gone: `src/pool/gone.c`, `gone.h`, `cw_gone()`\n"
            "also gone: `src/nothing/*.c`\n")
        got = check_tree(t)
        want = ["docs/A.md:3: no such file: src/pool/gone.c",
                "docs/A.md:3: no file named gone.h",
                "docs/A.md:3: no such symbol: cw_gone",
                "docs/A.md:4: no such file: src/nothing/*.c"]
        if got != want:
            print("FAIL the check on a tree with known offenders reported:")
            print("\n".join(got) or "(nothing)")
            print("instead of:")
            print("\n".join(want))
            return 1
    return 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    failed = self_test()
    bad = check_tree(sys.argv[1])
    if bad:
        print("FAIL names in the docs that are not in the tree:")
        print("\n".join(bad))
        failed = 1
    if not failed:
        print("passed: every file and symbol the docs name exists")
    return failed


if __name__ == "__main__":
    sys.exit(main())
