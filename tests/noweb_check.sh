#!/bin/sh
# Builds cwork with -DCWORK_WEB=OFF where pkg-config cannot see libmicrohttpd (only
# hiredis and OpenSSL, which the core needs for rediss://): the configure and the build succeed, no libcwork-web is made, the cwork
# command needs no libmicrohttpd and says what `cwork web` would need. First it checks
# that this environment does hide libmicrohttpd: the default configure must fail there.
#   noweb_check.sh SOURCE_DIR
set -eu
src=$1
dir=$(mktemp -d /tmp/cwork-noweb.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
mkdir -p "$dir/pc"
for m in hiredis openssl libssl libcrypto; do
    ln -s "$(pkg-config --variable=pcfiledir "$m")/$m.pc" "$dir/pc/$m.pc"
done
export PKG_CONFIG_LIBDIR="$dir/pc" PKG_CONFIG_PATH=""
# The sanitizer flags of the build under test must not leak into this separate build.
unset CFLAGS LDFLAGS

if cmake -S "$src" -B "$dir/with" -DCWORK_BUILD_TESTS=OFF -DCWORK_BUILD_EXTRAS=OFF \
    >"$dir/with.log" 2>&1; then
    fail "configuring with the web server succeeded without libmicrohttpd: the check proves nothing"
fi
cmake -S "$src" -B "$dir/build" -DCWORK_WEB=OFF -DCWORK_BUILD_TESTS=OFF \
    -DCWORK_BUILD_EXTRAS=OFF -DCMAKE_BUILD_TYPE=Release >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; fail "configuring with -DCWORK_WEB=OFF"; }
cmake --build "$dir/build" -j 2 >"$dir/build.log" 2>&1 ||
    { tail -n 40 "$dir/build.log"; fail "building with -DCWORK_WEB=OFF"; }
test -f "$dir/build/libcwork.a" || fail "no libcwork.a"
test -f "$dir/build/libcwork.so" || fail "no libcwork.so"
if ls "$dir/build" | grep -q 'libcwork-web'; then fail "libcwork-web was built"; fi
for f in "$dir/build/cwork" "$dir/build/libcwork.so"; do
    if readelf -d "$f" | grep -E 'NEEDED.*(microhttpd|gnutls)'; then fail "$f needs the above"; fi
done
"$dir/build/cwork" --version >/dev/null || fail "cwork --version"
status=0
"$dir/build/cwork" web >"$dir/out" 2>&1 || status=$?
test "$status" = 1 || fail "cwork web exited with $status, not 1"
grep -q 'built without the web UI' "$dir/out" || { cat "$dir/out"; fail "cwork web did not say why"; }
# The install has no cwork-web.pc and a CMake package without cwork::cwork_web.
cmake --install "$dir/build" --prefix "$dir/prefix" >/dev/null
test -n "$(find "$dir/prefix" -name cwork.pc)" || fail "no cwork.pc installed"
test -z "$(find "$dir/prefix" -name 'cwork-web.pc' -o -name 'libcwork-web*' -o -name cwork_web.h)" ||
    fail "web files installed"
echo "1 passed, 0 failed"
