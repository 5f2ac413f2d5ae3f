#!/usr/bin/env bash
# Checks the formatting (scripts/format.sh --check) and runs clang-tidy
# (scripts/tidy.sh); builds cwork with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs every test against a private redis-server (the CTest fixture of
# tests/CMakeLists.txt starts one per ctest run); then builds the threaded tests with
# ThreadSanitizer and runs them too. Every build has -Werror (CWORK_WERROR=ON). On a
# fresh Debian 12 machine it first installs what is missing
# (scripts/packages.sh: apt-get, through sudo when not root).
#
#   ./scripts/test.sh            # everything (about 15 minutes on 2 cores; the first
#                                # clang-tidy run 5 more)
#   CWORK_FUZZ_SECONDS=5 ./scripts/test.sh   # shorter fuzz run while developing
#
# Formatting differences are reported but only fail the run once the file
# .format-enforced exists at the top of the tree (it is added with the commit that
# formats the whole tree).
#
# Exit status: 0 when every test passed, non-zero otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# ---------------------------------------------------------------- dependencies
. scripts/packages.sh
packages=("${cwork_build_packages[@]}" "${cwork_test_packages[@]}")
# Node.js for the browser test: Debian's, unless the machine already has a node/npm.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
cwork_install_missing "${packages[@]}"

# playwright-core (no browser download: the test drives /usr/bin/chromium), again only
# when the lock file changed since the last install.
if [ ! tests/browser/node_modules/.package-lock.json -nt tests/browser/package-lock.json ]; then
    echo "== npm ci (tests/browser)"
    (cd tests/browser && npm ci --no-audit --no-fund)
fi

jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${CWORK_FUZZ_SECONDS:-30}

status=0

# ---------------------------------------------------------------- hygiene
echo "== formatting (scripts/format.sh --check)"
if format_report=$(./scripts/format.sh --check 2>&1); then
    echo "$format_report"
elif [ -e .format-enforced ]; then
    echo "$format_report"
    status=1
else
    echo "$format_report" | tail -n 1
    echo "   (reported only: not enforced until .format-enforced exists)"
fi

# ---------------------------------------------------------------- build and test
echo "== build (clang, ASan + UBSan, fuzz targets)"
CC=clang cwork_run_logged build/asan/configure.log cmake -S . -B build/asan \
    -DCWORK_SANITIZE=address -DCWORK_FUZZ=ON -DCWORK_FUZZ_SECONDS="$fuzz_seconds" -DCWORK_WERROR=ON
cmake --build build/asan -j "$jobs"

echo "== build (gcc, release: what scripts/demo.sh builds; gcc -O2 warns where clang doesn't)"
# -g changes no code; it lets the ABI check (scripts/abi.sh) read the library's types.
cwork_run_logged build/release-check/configure.log \
    cmake -S . -B build/release-check -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g \
    -DCWORK_WERROR=ON
cmake --build build/release-check -j "$jobs"

echo "== build (clang, ThreadSanitizer)"
CC=clang cwork_run_logged build/tsan/configure.log \
    cmake -S . -B build/tsan -DCWORK_SANITIZE=thread -DCWORK_WERROR=ON
cmake --build build/tsan -j "$jobs"

# clang-tidy (installed above; a machine without it skips the check and says so). The
# first run takes some 10 CPU-minutes; later ones check only the files that changed.
if command -v clang-tidy-14 >/dev/null 2>&1 || command -v clang-tidy >/dev/null 2>&1; then
    ./scripts/tidy.sh || status=1
else
    echo "== clang-tidy: not installed, skipped"
fi

# Each ctest run starts its own private redis-server (the "redis" fixture) and stops it
# at the end; a server named in the caller's environment is not used.
unset CWORK_TEST_REDIS_URL
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

echo "== tests under ThreadSanitizer (label: threaded)"
(cd build/tsan && ctest --output-on-failure -L threaded) || status=1

echo "== packaging checks (release build): install, static links, CWORK_WEB=OFF,"\
     "add_subdirectory, exported symbols, ABI"
(cd build/release-check && ctest --output-on-failure -L packaging) || status=1

echo "== all tests under ASan + UBSan"
(cd build/asan && ctest --output-on-failure -j "$jobs" -LE faults) || status=1

# The fault suite (tests/faults/, about 6 minutes): pools, a private Redis with AOF and
# the faults of issue 14, a freeze, a partition, a Sentinel and a Cluster failover; on
# the release build, whose timings are the ones users get.
echo "== fault suite (release build)"
(cd build/release-check && ctest --output-on-failure -L faults) || status=1

exit $status
