#!/usr/bin/env bash
# Runs clang-tidy (the checks of .clang-tidy, tests/.clang-tidy, bench/.clang-tidy) on
# every C file of the project: the library, the web server, the CLI, the examples, the
# benchmarks, the tests and the fuzz targets. Exit status 0 when there is no finding, 1
# when there is one, 2 when clang-tidy is missing.
#
#   ./scripts/tidy.sh                 # configures build/tidy (clang) and checks everything
#   ./scripts/tidy.sh src/redis/redis.c ... # only these files
#
# The static analyzer makes a run slow (some 10 CPU-minutes for the whole tree), so a
# file found clean is remembered (build/tidy/clean/) under a key of everything its result
# depends on: its text and compile command, every header of the project, the .clang-tidy
# files and clang-tidy's version. A later run checks again only what changed; touching a
# header checks everything. TIDY_NO_CACHE=1 checks everything anyway.
#
# CLANG_TIDY chooses the binary (default: Debian's clang-tidy-14, else clang-tidy);
# TIDY_JOBS the parallelism (default: nproc).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tidy=${CLANG_TIDY:-}
if [ -z "$tidy" ]; then
    for c in clang-tidy-14 clang-tidy; do
        if command -v "$c" >/dev/null 2>&1; then
            tidy=$c
            break
        fi
    done
fi
if [ -z "$tidy" ] || ! command -v "$tidy" >/dev/null 2>&1; then
    echo "clang-tidy is not installed (apt-get install clang-tidy)" >&2
    exit 2
fi
jobs=${TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}

# A clang configuration with the fuzz targets, so that every file has a compile command.
# Configuring generates the embedded scripts and assets the sources include; nothing is
# compiled.
build=build/tidy
mkdir -p "$build"
CC=clang cmake -S . -B "$build" -DCWORK_FUZZ=ON -DCWORK_WERROR=ON >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }

# One compile command per source file of ours (the library's files are also compiled
# into the fuzz targets; generated files are not ours to tidy): build/tidy/ours/.
mkdir -p "$build/ours" "$build/clean"
python3 - "$root" "$build/compile_commands.json" "$build/ours" <<'EOF'
import hashlib, json, os, sys
root, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
build = os.path.join(root, "build") + os.sep
seen, out = set(), []
for e in json.load(open(src)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.startswith(root + os.sep) or f.startswith(build) or f in seen:
        continue
    seen.add(f)
    e["file"] = f
    out.append(e)
json.dump(out, open(os.path.join(dst, "compile_commands.json"), "w"), indent=1)
# One line per file: its path and a key of its compile command.
with open(os.path.join(dst, "files"), "w") as fl:
    for e in out:
        cmd = e.get("command") or "\0".join(e.get("arguments", []))
        fl.write(e["file"] + "\t" + hashlib.sha1(cmd.encode()).hexdigest() + "\n")
EOF

# What every file's result depends on besides itself.
common=$( {
    "$tidy" --version
    cat .clang-tidy tests/.clang-tidy bench/.clang-tidy
    find src include cli tests bench examples "$build/generated" -name '*.h' -print0 |
        sort -z | xargs -0 sha1sum
} | sha1sum | cut -c1-40)

want=()
if [ $# -gt 0 ]; then
    for f in "$@"; do
        want+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
    done
fi

todo=$(mktemp -d /tmp/cwork-tidy.XXXXXX)
trap 'rm -rf "$todo"' EXIT
ntotal=0
nskip=0
run_files=()
run_keys=()
while IFS=$'\t' read -r file cmdkey; do
    if [ ${#want[@]} -gt 0 ]; then
        match=0
        for w in "${want[@]}"; do [ "$w" = "$file" ] && match=1; done
        [ $match = 1 ] || continue
    fi
    ntotal=$((ntotal + 1))
    key=$(printf '%s %s %s\n' "$common" "$cmdkey" "$(sha1sum <"$file")" | sha1sum | cut -c1-40)
    if [ -z "${TIDY_NO_CACHE:-}" ] && [ -e "$build/clean/$key" ]; then
        nskip=$((nskip + 1))
        continue
    fi
    printf '%s\t%s\n' "$file" "$key" >>"$todo/list"
    run_files+=("$file")
    run_keys+=("$key")
done <"$build/ours/files"
if [ ${#want[@]} -gt 0 ] && [ $ntotal -ne ${#want[@]} ]; then
    echo "tidy.sh: some of the files given have no compile command (not built by cmake?)" >&2
    exit 2
fi

nrun=0
[ -e "$todo/list" ] && nrun=$(wc -l <"$todo/list")
echo "== clang-tidy ($("$tidy" --version | awk '/version/ {print $NF; exit}'), $jobs jobs):" \
     "$nrun of $ntotal files ($nskip unchanged since they were found clean)"

# Each file on its own: its findings in $todo/out/N, and a clean file remembered.
mkdir -p "$todo/out"
check_one() { # "N<tab>FILE<tab>KEY"
    local n file key out
    IFS=$'\t' read -r n file key <<<"$1"
    out="$todo/out/$n"
    if "$tidy" -p "$build/ours" --quiet \
        -header-filter="^$root/(src|include|cli|tests|bench|examples)/" "$file" >"$out" 2>&1 &&
        ! grep -q -e ': warning:' -e ': error:' "$out"; then
        : >"$build/clean/$key"
        rm -f "$out"
    fi
}
export -f check_one
export tidy build root todo
if [ "$nrun" -gt 0 ]; then
    awk -F'\t' '{print NR "\t" $1 "\t" $2}' "$todo/list" |
        xargs -d '\n' -n 1 -P "$jobs" bash -c 'check_one "$1"' check_one
fi

# Every file checked is either remembered clean or has its output (findings, or
# clang-tidy's failure) in $todo/out; anything else (say, the temporary directory gone)
# is no result, and no result is no pass.
status=0
for i in "${!run_files[@]}"; do
    out="$todo/out/$((i + 1))"
    if [ -e "$out" ]; then
        status=1
        # clang-tidy's "N warnings generated." and suppression notes are noise here.
        grep -v -e 'warnings\? \(and [0-9]* errors\? \)\?generated\.$' \
            -e '^Suppressed [0-9]* warnings' -e '^Use -header-filter' -e '^$' "$out" || true
    elif [ ! -e "$build/clean/${run_keys[$i]}" ]; then
        status=1
        echo "${run_files[$i]}: no result from clang-tidy"
    fi
done
if [ $status -ne 0 ]; then
    echo "clang-tidy: findings above (see .clang-tidy for the checks and how to silence one)" >&2
    exit 1
fi
echo "clang-tidy: no findings"
