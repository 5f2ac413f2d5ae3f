#!/usr/bin/env bash
# Builds cwork (release) and runs `cwork demo`: a private redis-server on a free loopback
# port (unless --redis URL is given), a worker pool with example jobs — some fail and
# are retried — a stream of jobs, and a progress line until Ctrl-C.
#
#   ./scripts/demo.sh                       # everything on a private Redis
#   ./scripts/demo.sh --redis redis://127.0.0.1:6379 --ns my-demo --rate 500
#
# On a fresh Debian 12 machine it first installs what is missing (apt-get; sudo when
# not root). Every option is passed to `cwork demo` (see `cwork demo --help`).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

packages=(build-essential cmake pkg-config libhiredis-dev redis-server)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

echo "== building (release) in build/release" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCWORK_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" --target cwork_cli >/dev/null

exec build/release/cwork demo "$@"
