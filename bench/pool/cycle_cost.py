#!/usr/bin/env python3
"""What one call of the cycle script costs Redis, without a pool around it.

    cycle_cost.py [--port P] [--calls N] [--mult M] [--queues 5|10] [--trim K] [--script FILE]
                  [--callgrind PID]

Runs N calls of one fixed EVALSHA of the script (src/scripts/cycle.lua by default, its
includes expanded as the build does) through `redis-cli --pipe` against a private,
empty redis-server: 5 job types, 10·M jobs per call committed (3,3,2,1,1 per type, ×M)
and 10·M fetched (1,1,2,3,3, ×M), lock counters present, no other feature — the plain
path of a pool whose round trips carry 10·M jobs. With --queues 10, 10 types, one job
of each committed and 2,0,2,0,1,1,1,1,1,1 fetched per 10. Before each call an RPUSH per type
puts the committed bytes back at the tail of its in-progress list, so that every LREM
removes a job; the fetched jobs pile up at the head (the queues are filled first) — or,
with --trim K, an LTRIM after each call keeps the K newest, as short as a pool's lists
are (a push at the head of a list of thousands moves a listpack node of 8 kB each time).

Prints the script's µs per call (INFO commandstats: EVALSHA, and the commands it ran)
and the server's CPU per call (INFO cpu, the RPUSHes included). Timings move with the
machine's load; with --callgrind PID (a redis-server started under
`valgrind --tool=callgrind --instr-atstart=no`) it prints instructions per call
instead, which do not — the way to compare two versions of the script on a busy VM —
and, of those, the ones inside EVALSHA (callgrind_annotate's inclusive count: the
script's own cost, without reading the request, the RPUSHes and LTRIMs).

Needs redis-cli, and callgrind_control for --callgrind. FLUSHALLs the server.
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCRIPT = os.path.join(HERE, "..", "..", "src", "scripts", "cycle.lua")
NTYPES = 5  # --queues 10: the layout below for 10 types
PREFIX = "cycle_cost:"
COMMIT = [3, 3, 2, 1, 1]  # jobs committed per type, per 10
FIRST = [0, 1, 2, 2, 3, 3, 3, 4, 4, 4]  # each draw's first type, per 10
COMMIT10 = [1] * 10  # with 10 types: one job each, fetched 2,0,2,0,1,1,1,1,1,1
FIRST10 = [0, 0, 2, 2, 4, 5, 6, 7, 8, 9]


def expand(path):
    """The script as the build sends it: `--[[include x.lua]]` replaced by x.lua."""
    text = open(path).read()
    d = os.path.dirname(path)
    return re.sub(r"--\[\[include ([A-Za-z0-9_]+\.lua)\]\]",
                  lambda m: open(os.path.join(d, m.group(1))).read(), text)


def job(t):
    return ('{"name":"t%d","id":"0123456789abcdef01234567","t":1764680000,'
            '"args":{"x":1},"enqueued_at":1764680000}' % (t + 1))


def key(kind, t):
    name = "t%d" % (t + 1)
    return PREFIX + {"paused": "jobs:%s:paused", "lock": "jobs:%s:lock",
                     "max_concurrency": "jobs:%s:max_concurrency", "queue": "jobs:%s",
                     "inprogress": "jobs:%s:cost:inprogress",
                     "lock_info": "jobs:%s:lock_info"}[kind] % name


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cli(port, *args, stdin=None):
    r = subprocess.run(["redis-cli", "-p", str(port)] + list(args), input=stdin,
                       capture_output=True, check=True)
    return r.stdout.decode()


def script_call(sha, mult, trim):
    """The EVALSHA (PROTOCOL §5.8 layout) and the RPUSHes that come before it."""
    kinds = ["paused", "lock", "max_concurrency", "queue", "inprogress", "lock_info"]
    keys = [key(k, t) for k in kinds for t in range(NTYPES)]
    keys += [PREFIX + "retry", PREFIX + "dead", PREFIX + "cwork:cancelled"]
    draws = b""
    for first in FIRST * mult:
        draws += bytes([first + 1] + [t + 1 for t in range(NTYPES) if t != first])
    groups, raws = b"", []
    for t in range(NTYPES):
        c = COMMIT[t] * mult
        groups += bytes([0, t + 1, c >> 8, c & 255, 0, 0])
        raws += [job(t)] * c
    call = resp("EVALSHA", sha, str(len(keys)), *keys, "cost", "0", draws, "1", groups, *raws)
    restore = b"".join(resp("RPUSH", key("inprogress", t), *([job(t)] * (COMMIT[t] * mult)))
                       for t in range(NTYPES))
    if trim:
        call += b"".join(resp("LTRIM", key("inprogress", t), "0", str(trim - 1))
                         for t in range(NTYPES))
    return restore + call


def setup(port, calls, mult):
    out = []
    for t in range(NTYPES):
        need = 3 * calls * mult + 100
        for i in range(0, need, 1000):
            out.append(resp("RPUSH", key("queue", t), *([job(t)] * min(1000, need - i))))
        out.append(resp("SET", key("lock", t), "1000000"))
    cli(port, "--pipe", stdin=b"".join(out))


def cpu_seconds(port):
    info = cli(port, "INFO", "cpu")
    return sum(float(v) for k, v in re.findall(r"(used_cpu_(?:sys|user)):([0-9.]+)", info))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=24101)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--mult", type=int, default=1, help="10*MULT jobs per call")
    ap.add_argument("--queues", type=int, choices=(5, 10), default=5)
    ap.add_argument("--trim", type=int, default=0,
                    help="keep each in-progress list's K newest jobs after each call")
    ap.add_argument("--script", default=DEFAULT_SCRIPT)
    ap.add_argument("--callgrind", type=int, help="pid of a redis-server under callgrind")
    a = ap.parse_args()
    if a.queues == 10:
        global NTYPES, COMMIT, FIRST
        NTYPES, COMMIT, FIRST = 10, COMMIT10, FIRST10
    sha = cli(a.port, "SCRIPT", "LOAD", expand(a.script)).strip()
    cli(a.port, "FLUSHALL")
    warm = 50
    setup(a.port, a.calls + warm, a.mult)
    one = script_call(sha, a.mult, a.trim)
    cli(a.port, "--pipe", stdin=one * warm)
    cli(a.port, "CONFIG", "RESETSTAT")
    if a.callgrind:
        subprocess.run(["callgrind_control", "-z", str(a.callgrind)], capture_output=True)
        subprocess.run(["callgrind_control", "-i", "on", str(a.callgrind)], capture_output=True)
        time.sleep(0.5)  # (callgrind takes commands at its next check)
    cpu0 = cpu_seconds(a.port)
    cli(a.port, "--pipe", stdin=one * a.calls)
    cpu1 = cpu_seconds(a.port)
    stats = cli(a.port, "INFO", "commandstats")
    name = os.path.basename(a.script)
    if a.callgrind:
        time.sleep(0.5)
        subprocess.run(["callgrind_control", "-i", "off", str(a.callgrind)], capture_output=True)
        subprocess.run(["callgrind_control", "-d", str(a.callgrind)], capture_output=True)
        time.sleep(0.5)
        cwd = os.readlink("/proc/%d/cwd" % a.callgrind)  # where callgrind writes
        files = [os.path.join(cwd, f) for f in os.listdir(cwd)
                 if f.startswith("callgrind.out.%d." % a.callgrind)]
        if not files:
            sys.exit("no callgrind.out.%d.* in %s" % (a.callgrind, cwd))
        latest = max(files, key=os.path.getmtime)
        total = int(re.search(r"^totals: (\d+)", open(latest).read(), re.M).group(1))
        ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", latest],
                             capture_output=True, text=True).stdout
        m = re.search(r"^\s*([0-9,]+) .*:evalShaCommand ", ann, re.M)
        inside = int(m.group(1).replace(",", "")) if m else 0
        print("%s, %d queues, %d jobs/call: %.0f instructions per call (RPUSHes included), "
              "%.0f inside EVALSHA" % (name, NTYPES, 10 * a.mult, total / a.calls,
                                       inside / a.calls))
        return
    usec = dict(re.findall(r"cmdstat_(\w+):calls=\d+,usec=(\d+)", stats))
    script = int(usec.get("evalsha", 0)) / a.calls
    inner = sum(int(v) for k, v in usec.items()
                if k not in ("evalsha", "info", "rpush", "ltrim", "config")) / a.calls
    print("%s, %d queues, %d jobs/call: EVALSHA %.2f us/call (its commands %.2f), server CPU "
          "%.2f us/call (RPUSHes included), load %s"
          % (name, NTYPES, 10 * a.mult, script, inner, (cpu1 - cpu0) * 1e6 / a.calls,
             open("/proc/loadavg").read().split()[0]))


if __name__ == "__main__":
    main()
