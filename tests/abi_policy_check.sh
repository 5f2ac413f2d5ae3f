#!/bin/sh
# scripts/abi.sh enforces docs/ABI.md, proved on a copy of the tree (scripts/abi.sh, abi/,
# include/, docs/ABI.md) against the built libraries:
#  - a dump that promises a function the library lacks (an incompatible change) under a
#    released version (its history entry without "unreleased"): `update` refuses and
#    leaves the dump as it was;
#  - the same under a version whose history entry says "unreleased": `update` writes it;
#  - no history entry for the dumps' version: `check` fails and says so.
#   abi_policy_check.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
for tool in abidw abidiff readelf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "skipped: no $tool (abigail-tools)"; exit 77; }
done
fail() {
    echo "FAIL: $*"
    exit 1
}
work=$(mktemp -d /tmp/cwork-abi-policy.XXXXXX)
trap 'rm -rf "$work"' EXIT
version=$(sed -n "s/.* soname='[^']*\.so\.\([0-9.]*\)'.*/\1/p" "$src/abi/libcwork.abi" | head -n 1)
test -n "$version" || fail "no SONAME in abi/libcwork.abi"

tree() { # DIR STATUS: a copy whose history entry for $version is "### $version STATUS"
    mkdir -p "$1/scripts" "$1/docs"
    cp -r "$src/abi" "$src/include" "$1/"
    cp "$src/scripts/abi.sh" "$1/scripts/"
    sed "s/^### $version\( .*\)\{0,1\}\$/### $version$2/" "$src/docs/ABI.md" >"$1/docs/ABI.md"
    # The dump promises one more function than the library has.
    line=$(grep -n "<elf-symbol name='cwork_" "$1/abi/libcwork.abi" | head -n 1 | cut -d: -f1)
    sed -i "${line}p; ${line}s/name='cwork_[a-z0-9_]*'/name='cwork_policy_check_gone'/" \
        "$1/abi/libcwork.abi"
    grep -q cwork_policy_check_gone "$1/abi/libcwork.abi" || fail "could not edit the dump"
}

tree "$work/released" ""
if sh "$work/released/scripts/abi.sh" update "$build" >"$work/out" 2>&1; then
    cat "$work/out"
    fail "update wrote an incompatible dump under released $version"
fi
grep -q REFUSED "$work/out" || { cat "$work/out"; fail "update failed without saying why"; }
grep -q cwork_policy_check_gone "$work/released/abi/libcwork.abi" || fail "the refused dump changed"

tree "$work/unreleased" " — unreleased"
sh "$work/unreleased/scripts/abi.sh" update "$build" >"$work/out" 2>&1 ||
    { cat "$work/out"; fail "update refused an unreleased version"; }
if grep -q cwork_policy_check_gone "$work/unreleased/abi/libcwork.abi"; then
    fail "update left the unreleased dump as it was"
fi

sed -i "/^### $version/d" "$work/unreleased/docs/ABI.md"
if sh "$work/unreleased/scripts/abi.sh" check "$build" >"$work/out" 2>&1; then
    fail "check passed without a history entry for $version"
fi
grep -q "no history entry" "$work/out" || { cat "$work/out"; fail "check failed without saying why"; }
echo "3 passed, 0 failed"
