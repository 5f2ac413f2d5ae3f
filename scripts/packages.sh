# Sourced by scripts/demo.sh and scripts/test.sh (not run): the Debian 12 packages each
# README command needs, and the installer both use. Installs with
# --no-install-recommends, so every package a command really uses is listed here.
# tests/packages_check.sh fails when CMakeLists.txt requires a pkg-config module whose
# package is missing from cwork_build_packages.

# Building cwork (release) and running `cwork demo`: scripts/demo.sh.
cwork_build_packages=(
    build-essential   # cc, make, libc headers; binutils for the install check
    cmake
    pkg-config
    libhiredis-dev    # pkg-config module hiredis
    libssl-dev        # pkg-config module openssl (rediss://)
    libmicrohttpd-dev # pkg-config module libmicrohttpd
    redis-server      # the demo's private Redis
)

# What scripts/test.sh needs besides those.
cwork_test_packages=(
    clang libclang-rt-14-dev                # ASan, UBSan, TSan, libFuzzer
    redis-tools                             # redis-cli: test.sh waits for its Redis; cluster creation
    redis-sentinel                          # the Sentinel failover tests
    openssl                                 # certificates for the TLS tests
    golang-go golang-github-robfig-cron-dev # the Go oracle (tests/oracle)
    tzdata                                  # time-zone tests of the cron parser
    chromium                                # the browser test
    ca-certificates                         # npm ci fetches playwright-core over https
    prometheus                              # promtool checks the /metrics output
    abigail-tools                           # abidiff: the ABI check (scripts/abi.sh)
    clang-tidy python3                      # scripts/tidy.sh
    clang-format                            # scripts/format.sh --check
    iproute2                                # `ip netns`: the fault suite's partition
    libunistring-dev                        # `pkg-config --static cwork-web` names
                                            # -lunistring (gnutls's), which no -dev
                                            # package pulls in: the install check
)

# Installs those of the given packages that are not installed yet: apt-get update,
# then apt-get install, through sudo when not root. Prints what it installs.
cwork_install_missing() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "== installing: ${missing[*]}" >&2
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "== these packages are missing and installing them needs root: run this" \
                 "script as root, or install sudo, or run: apt-get install ${missing[*]}" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    # `env` inside sudo: sudo resets the environment, and without the variable tzdata
    # asks for a time zone on a terminal.
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# Runs a command with its output kept in a log file; when it fails, prints the log
# (where cmake says which package it did not find) and returns its status.
cwork_run_logged() {
    local log=$1 status=0
    shift
    mkdir -p "$(dirname "$log")"
    "$@" >"$log" 2>&1 || status=$?
    if [ $status -ne 0 ]; then
        cat "$log" >&2
        echo "== failed (status $status): $* — the output above is also in $log" >&2
    fi
    return $status
}
