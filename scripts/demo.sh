#!/usr/bin/env bash
# Builds cwork (release) and runs `cwork demo`: a private redis-server on a free loopback
# port (unless --redis URL is given), a worker pool with example jobs — some fail and
# are retried — a stream of jobs, and a progress line until Ctrl-C.
#
#   ./scripts/demo.sh                       # everything on a private Redis
#   ./scripts/demo.sh --redis redis://127.0.0.1:6379 --ns my-demo --rate 500
#
# On a fresh Debian 12 machine it first installs what is missing (scripts/packages.sh:
# apt-get, through sudo when not root). When the build fails it prints cmake's output.
# Every option is passed to `cwork demo` (see `cwork demo --help`).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

. scripts/packages.sh
cwork_install_missing "${cwork_build_packages[@]}"

# cmake's output goes to a log, printed when a step fails.
echo "== building (release) in build/release" >&2
cwork_run_logged build/release/configure.log \
    cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCWORK_BUILD_TESTS=OFF
cwork_run_logged build/release/build.log \
    cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" --target cwork_cli

exec build/release/cwork demo "$@"
