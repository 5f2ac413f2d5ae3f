#!/usr/bin/env bash
# Builds cwork with AddressSanitizer + UndefinedBehaviorSanitizer and runs every test
# against a private redis-server; then builds the threaded tests with ThreadSanitizer
# and runs them too. On a fresh Debian 12 machine it first installs what is missing
# (scripts/packages.sh: apt-get, through sudo when not root).
#
#   ./scripts/test.sh            # everything (about 8 minutes on 2 cores)
#   CWORK_FUZZ_SECONDS=5 ./scripts/test.sh   # shorter fuzz run while developing
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

# ---------------------------------------------------------------- private redis-server
redis_dir=$(mktemp -d /tmp/cwork-test-redis.XXXXXX)
redis_pid=""
cleanup() {
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    rm -rf "$redis_dir"
}
trap cleanup EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_redis() {
    local port
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 30000))
        port_in_use "$port" && continue
        redis-server --port "$port" --bind 127.0.0.1 --dir "$redis_dir" --save '' \
            --appendonly no --daemonize no --loglevel warning >"$redis_dir/log" 2>&1 &
        redis_pid=$!
        for _ in $(seq 1 100); do
            if redis-cli -p "$port" ping >/dev/null 2>&1; then
                export CWORK_TEST_REDIS_URL="redis://127.0.0.1:$port"
                echo "== redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port"
                return 0
            fi
            kill -0 "$redis_pid" 2>/dev/null || break
            sleep 0.05
        done
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=""
    done
    echo "could not start redis-server" >&2
    return 1
}

# ---------------------------------------------------------------- build and test
echo "== build (clang, ASan + UBSan, fuzz targets)"
CC=clang cwork_run_logged build/asan/configure.log cmake -S . -B build/asan \
    -DCWORK_SANITIZE=address -DCWORK_FUZZ=ON -DCWORK_FUZZ_SECONDS="$fuzz_seconds"
cmake --build build/asan -j "$jobs"

echo "== build (gcc, release: what scripts/demo.sh builds; gcc -O2 warns where clang doesn't)"
cwork_run_logged build/release-check/configure.log \
    cmake -S . -B build/release-check -DCMAKE_BUILD_TYPE=Release
cmake --build build/release-check -j "$jobs"

echo "== build (clang, ThreadSanitizer)"
CC=clang cwork_run_logged build/tsan/configure.log \
    cmake -S . -B build/tsan -DCWORK_SANITIZE=thread
cmake --build build/tsan -j "$jobs"

start_redis

status=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

echo "== tests under ThreadSanitizer (label: threaded)"
(cd build/tsan && ctest --output-on-failure -L threaded) || status=1

echo "== install check (release build)"
(cd build/release-check && ctest --output-on-failure -R install_check) || status=1

echo "== all tests under ASan + UBSan"
(cd build/asan && ctest --output-on-failure -j "$jobs" -LE faults) || status=1

# The fault suite (tests/faults/, about 3 minutes): pools, a private Redis with AOF and
# the faults of issue 14; on the release build, whose timings are the ones users get.
echo "== fault suite (release build)"
(cd build/release-check && ctest --output-on-failure -L faults) || status=1

exit $status
