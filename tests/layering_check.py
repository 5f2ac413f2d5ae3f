#!/usr/bin/env python3
"""The subsystem layering of src/ is enforced by the build: proves it.

    layering_check.py BUILD_DIR SOURCE_DIR

1. For every pair of subsystems (S, T): a file compiled with exactly the flags the build
   gives S's own files (compile_commands.json) and including T's main header compiles
   when T is one of S's allowed arrows, and fails with "No such file" when it is not.
   The arrows are stated here, independently of src/*/CMakeLists.txt, as
   docs/ARCHITECTURE.md draws them: an edge added to the build but not to the
   architecture (or the reverse) fails this test.
2. A scratch build (a copy of the library's sources, configured anew) into which one
   deliberate back-edge is added (src/job including the pool's header) fails to compile
   at that file; the same copy without it builds the job subsystem.

Exit 0 when every case holds, 1 otherwise (each failure printed).
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

# What each subsystem may include, transitively (the closure of the arrows in
# docs/ARCHITECTURE.md), and the header that stands for each.
ALLOWED = {
    "base": set(),
    "json": {"base"},
    "time": {"base"},
    "redis": {"base"},
    "scripts": {"redis", "base"},
    "job": {"json", "base"},
    "sharding": {"job", "json", "base", "redis"},
    "enqueue": {"job", "json", "base", "redis", "scripts", "sharding"},
    "maintenance": {"job", "json", "base", "redis", "time", "scripts"},
    "pool": {"maintenance", "sharding", "job", "json", "base", "redis", "time", "scripts"},
    "client": {"maintenance", "sharding", "job", "json", "base", "redis", "time", "scripts"},
    "web": {"client", "maintenance", "sharding", "job", "json", "base", "redis", "time",
            "scripts"},
}
HEADER = {
    "base": "util.h", "json": "gojson.h", "time": "cron.h", "redis": "redis.h",
    "scripts": "scripts.h", "job": "job.h", "sharding": "sharding.h", "enqueue": "enqueue.h",
    "maintenance": "heartbeat.h", "pool": "pool.h", "client": "client.h", "web": "web.h",
}


def fail(msg):
    print("FAIL " + msg)
    return 1


def subsystem_flags(build, src):
    """The compile command of one .c file of each subsystem, as a list of words."""
    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    flags = {}
    for e in entries:
        path = os.path.realpath(e["file"])
        rel = os.path.relpath(path, os.path.realpath(os.path.join(src, "src")))
        parts = rel.split(os.sep)
        if len(parts) == 2 and parts[0] in ALLOWED and parts[0] not in flags:
            words = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
            flags[parts[0]] = (words, path)
    # The generated scripts' own file stands for the scripts subsystem.
    for e in entries:
        if e["file"].endswith(os.path.join("generated", "scripts", "scripts.c")):
            words = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
            flags.setdefault("scripts", (words, e["file"]))
    return flags


def scratch_command(words, source_file, scratch):
    """The file's own command with its output and input replaced by a syntax check."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if w in ("-c", "-MD", "-MMD") or os.path.realpath(w) == os.path.realpath(source_file):
            continue
        out.append(w)
    return out + ["-fsyntax-only", scratch]


def check_matrix(build, src, tmp):
    failures = 0
    flags = subsystem_flags(build, src)
    missing = set(ALLOWED) - set(flags)
    if missing:
        return fail("no compile command for subsystem(s) %s in %s/compile_commands.json"
                    % (", ".join(sorted(missing)), build))
    cases = 0
    for s in sorted(ALLOWED):
        words, source_file = flags[s]
        for t in sorted(ALLOWED):
            if t == s:
                continue
            scratch = os.path.join(tmp, "%s_includes_%s.c" % (s, t))
            with open(scratch, "w") as f:
                f.write('#include "%s"\nint cw_layering_scratch;\n' % HEADER[t])
            r = subprocess.run(scratch_command(words, source_file, scratch), cwd=tmp,
                               capture_output=True, text=True)
            cases += 1
            if t in ALLOWED[s] and r.returncode != 0:
                failures += fail("%s may include %s's %s but it does not compile:\n%s"
                                 % (s, t, HEADER[t], r.stderr[-2000:]))
            elif t not in ALLOWED[s]:
                if r.returncode == 0:
                    failures += fail("%s may not include %s's %s, yet it compiles"
                                     % (s, t, HEADER[t]))
                elif "No such file" not in r.stderr and "not found" not in r.stderr:
                    failures += fail("%s including %s failed for another reason:\n%s"
                                     % (s, HEADER[t], r.stderr[-2000:]))
    print("matrix: %d pairs checked" % cases)
    return failures


def check_scratch_build(src, tmp):
    """A copy of the library's sources: the job subsystem builds; with a back-edge it
    fails at the file that has it."""
    copy = os.path.join(tmp, "tree")
    os.makedirs(copy)
    for part in ("CMakeLists.txt", "include", "src", "cmake", "web", "cli", "examples"):
        p = os.path.join(src, part)
        if os.path.isdir(p):
            shutil.copytree(p, os.path.join(copy, part))
        else:
            shutil.copy(p, os.path.join(copy, part))
    build = os.path.join(tmp, "build")
    cfg = subprocess.run(["cmake", "-S", copy, "-B", build, "-DCWORK_BUILD_TESTS=OFF",
                          "-DCWORK_BUILD_EXTRAS=OFF"], capture_output=True, text=True)
    if cfg.returncode != 0:
        return fail("the scratch tree does not configure:\n" + cfg.stdout[-2000:] + cfg.stderr[-2000:])

    def build_job():
        return subprocess.run(["cmake", "--build", build, "--target", "cwork_src_job"],
                              capture_output=True, text=True)

    r = build_job()
    if r.returncode != 0:
        return fail("the scratch tree's job subsystem does not build without the back-edge:\n"
                    + r.stdout[-2000:] + r.stderr[-2000:])
    edge = os.path.join(copy, "src", "job", "back_edge.c")
    with open(edge, "w") as f:
        f.write('/* A deliberate back-edge: job may not see the pool. */\n'
                '#include "pool.h"\nint cw_back_edge;\n')
    r = build_job()
    text = r.stdout + r.stderr
    if r.returncode == 0:
        return fail("the scratch tree built src/job/back_edge.c, which includes pool.h")
    if "back_edge.c" not in text or "pool.h" not in text:
        return fail("the scratch build failed, but not at the back-edge:\n" + text[-2000:])
    print("scratch build: src/job/back_edge.c including pool.h fails to compile, as it must")
    return 0


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="cwork-layering-") as tmp:
        failures = check_matrix(build, src, tmp)
        failures += check_scratch_build(src, tmp)
    print("layering: %s" % ("ok" if failures == 0 else "%d failure(s)" % failures))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
