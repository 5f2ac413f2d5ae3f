#!/bin/sh
# Installs the build into a temporary prefix and builds programs against it the ways a
# user does, checking what each one needs at run time:
#  - what is installed: the header, libcwork and libcwork-web (static and shared, with
#    the SONAMEs the header's version asks for: .so.0.MINOR while the version is 0.x,
#    .so.MAJOR from 1.0 on), a pkg-config file for each, the CMake package;
#  - what the shared libraries export: libcwork.so the cwork_ API and the internal
#    symbols src/cwork.map lists for libcwork-web, libcwork-web.so only cwork_web_;
#  - an enqueue-only program (examples/enqueue.c) through `pkg-config cwork` and through
#    the CMake package's cwork::cwork: it needs neither libmicrohttpd nor its TLS stack
#    (readelf on the program, ldd on everything it loads);
#  - the same program linked statically through `pkg-config --static cwork` (cc -static):
#    no dynamic section at all; it runs and enqueues its 101 jobs into the test Redis;
#  - a program serving the web UI through `pkg-config cwork-web`, through the CMake
#    package's cwork::cwork_web, and through `pkg-config --static cwork-web` with only
#    cwork's static libraries installed: each starts the server and stops it.
#   install_check.sh BUILD_DIR SOURCE_DIR
# The Redis: CWORK_TEST_REDIS_URL, else the URL in CWORK_TEST_REDIS_FILE (the fixture).
set -eu
build=$1
src=$2
version_part() { awk -v p="CWORK_VERSION_$1" '$1 == "#define" && $2 == p {print $3}' \
    "$src/include/cwork.h"; }
major=$(version_part MAJOR)
minor=$(version_part MINOR)
if [ "$major" = 0 ]; then so="libcwork.so.0.$minor"; else so="libcwork.so.$major"; fi
prefix=$(mktemp -d /tmp/cwork-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name "$so" -printf '%h\n' | head -n 1)
test -n "$libdir" || fail "$so not installed"
webso=$(echo "$so" | sed 's/^libcwork/libcwork-web/')
for f in "$prefix/include/cwork.h" "$prefix/include/cwork_web.h" "$libdir/libcwork.a" "$libdir/libcwork-web.a" \
    "$libdir/$webso" "$libdir/pkgconfig/cwork.pc" "$libdir/pkgconfig/cwork-web.pc" \
    "$libdir/cmake/cwork/cworkConfig.cmake" "$libdir/cmake/cwork/cworkWebTargets.cmake"; do
    test -f "$f" || fail "$f not installed"
done

# The command and its man page (made by `cwork man` at build time from the option tables).
test -x "$prefix/bin/cwork" || fail "bin/cwork not installed"
man1="$prefix/share/man/man1/cwork.1"
test -f "$man1" || fail "share/man/man1/cwork.1 not installed"
grep -q '^\.TH CWORK 1' "$man1" || fail "cwork.1 has no .TH CWORK 1 header"
grep -q '^\.SH CWORK stats' "$man1" || fail "cwork.1 lacks the stats command's options"
grep -q 'days of history' "$man1" || fail "cwork.1 lacks --days's text from the table"
if command -v groff >/dev/null 2>&1; then
    groff -k -man -Tutf8 "$man1" | grep -q 'days of history' || fail "groff cannot render cwork.1"
fi

soname() { objdump -p "$1" | awk '/SONAME/ {print $2}'; }
test "$(soname "$libdir/$so")" = "$so" || fail "libcwork's SONAME is '$(soname "$libdir/$so")', not $so"
test "$(soname "$libdir/$webso")" = "$webso" ||
    fail "libcwork-web's SONAME is '$(soname "$libdir/$webso")', not $webso"

# Exports: the private list is what cwork.map names between "for libcwork-web only" and
# "local:".
sed -n '/for libcwork-web only/,/local:/p' "$src/src/cwork.map" | tr ' ;' '\n\n' |
    grep -E '^cw_[a-z_0-9]+$' | sort >"$prefix/private"
nm -D --defined-only "$libdir/$so" | awk '$2 ~ /[TDBRVW]/ && $3 !~ /^cwork_/ {print $3}' |
    sort >"$prefix/exported"
bad=$(comm -23 "$prefix/exported" "$prefix/private")
test -z "$bad" || fail "libcwork.so exports symbols that are neither API nor listed in cwork.map: $bad"
bad=$(nm -D --defined-only "$libdir/$webso" | awk '$2 ~ /[TDBRVW]/ && $3 !~ /^cwork_web_/ {print $3}')
test -z "$bad" || fail "libcwork-web.so exports: $bad"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
needs() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
no_web_stack() { # FILE WHAT: neither FILE nor anything it loads is the web server's stack
    if needs "$1" | grep -E 'microhttpd|gnutls'; then fail "$2 needs the above"; fi
    if LD_LIBRARY_PATH="$libdir" ldd "$1" | grep -E 'microhttpd|gnutls|nettle|p11-kit'; then
        fail "$2 loads the above"
    fi
}

# The enqueue-only program, shared, through pkg-config.
cc -std=c11 -Wall -Werror -o "$prefix/enqueue_pc" "$src/examples/enqueue.c" \
    $(pkg-config --cflags --libs cwork)
needs "$prefix/enqueue_pc" | grep -qx "$so" || fail "enqueue_pc does not need $so"
no_web_stack "$prefix/enqueue_pc" "an enqueue-only program (pkg-config cwork)"

# A program that serves the web UI (port 0: any free one) and stops.
cat >"$prefix/web.c" <<'EOC'
#include <cwork_web.h>
#include <stdio.h>

int main(void)
{
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new("redis://127.0.0.1:6379", NULL, &err);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    cwork_web *web = redis ? cwork_web_start(redis, "installcheck", &o, &err) : NULL;
    if (!web) {
        fprintf(stderr, "web: %s\n", err.message);
        return 1;
    }
    printf("port %d\n", cwork_web_port(web));
    cwork_web_free(web);
    cwork_redis_free(redis);
    return 0;
}
EOC
serves() { # PROGRAM: it started a server on some port
    LD_LIBRARY_PATH="$libdir" "$1" >"$prefix/out" 2>&1 || { cat "$prefix/out"; fail "$1 failed"; }
    grep -Eq '^port [1-9][0-9]*$' "$prefix/out" || { cat "$prefix/out"; fail "$1 printed no port"; }
}
cc -std=c11 -Wall -Werror -o "$prefix/web_pc" "$prefix/web.c" $(pkg-config --cflags --libs cwork-web)
needs "$prefix/web_pc" | grep -qx "$webso" || fail "web_pc does not need $webso"
serves "$prefix/web_pc"

# CMake consumers: cwork::cwork (the static library by default) and cwork::cwork_web.
mkdir -p "$prefix/consumer"
cp "$prefix/web.c" "$prefix/consumer/web.c"
cat >"$prefix/consumer/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(cwork REQUIRED COMPONENTS web)
add_executable(enqueue $src/examples/enqueue.c)
target_link_libraries(enqueue PRIVATE cwork::cwork)
add_executable(web web.c)
target_link_libraries(web PRIVATE cwork::cwork_web)
EOC
# The sanitizer flags of the build under test must not leak into this separate build.
env -u CFLAGS -u LDFLAGS cmake -S "$prefix/consumer" -B "$prefix/consumer/build" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$prefix/consumer.log" 2>&1 ||
    { cat "$prefix/consumer.log"; fail "configuring the CMake consumer"; }
cmake --build "$prefix/consumer/build" >"$prefix/consumer.log" 2>&1 ||
    { cat "$prefix/consumer.log"; fail "building the CMake consumer"; }
no_web_stack "$prefix/consumer/build/enqueue" "an enqueue-only program (cwork::cwork)"
if needs "$prefix/consumer/build/enqueue" | grep -q libcwork; then
    fail "cwork::cwork is not the static library"
fi
serves "$prefix/consumer/build/web"

# Static links through pkg-config --static, with only the static libraries installed
# (as a distribution's -dev package without the .so would have it).
rm -f "$libdir"/libcwork*.so*
cc -std=c11 -Wall -Werror -static -o "$prefix/enqueue_static" "$src/examples/enqueue.c" \
    $(pkg-config --static --cflags --libs cwork) 2>"$prefix/static.log" ||
    { cat "$prefix/static.log"; fail "cc -static with pkg-config --static cwork"; }
if readelf -d "$prefix/enqueue_static" | grep -q NEEDED; then
    fail "the static enqueue-only program needs shared libraries"
fi
cc -std=c11 -Wall -Werror -o "$prefix/web_static" "$prefix/web.c" \
    $(pkg-config --static --cflags --libs cwork-web)
if needs "$prefix/web_static" | grep -q libcwork; then fail "web_static needs libcwork"; fi
serves "$prefix/web_static"

# The static program works: its jobs land in Redis.
url=${CWORK_TEST_REDIS_URL:-}
if [ -z "$url" ] && [ -n "${CWORK_TEST_REDIS_FILE:-}" ] && [ -f "$CWORK_TEST_REDIS_FILE" ]; then
    url=$(cat "$CWORK_TEST_REDIS_FILE")
fi
test -n "$url" || fail "no test Redis (CWORK_TEST_REDIS_URL or the redis fixture)"
ns="cwork-install-check-$$"
"$prefix/enqueue_static" "$url" "$ns" >"$prefix/out" 2>&1 ||
    { cat "$prefix/out"; fail "the static enqueue-only program failed"; }
n=$(redis-cli -u "$url" LLEN "$ns:jobs:send_email")
redis-cli -u "$url" --scan --pattern "$ns:*" | while read -r k; do redis-cli -u "$url" DEL "$k" >/dev/null; done
test "$n" = 101 || { cat "$prefix/out"; fail "the static program enqueued $n jobs, not 101"; }
echo "1 passed, 0 failed"
