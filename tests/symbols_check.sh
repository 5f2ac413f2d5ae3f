#!/bin/sh
# Every global symbol the library defines is public (cwork_*) or internal (cw_*), so a
# program that links libcwork.a never clashes on a name like job_decode or web_route;
# the shared library exports only cwork_* (src/cwork.map).
#   symbols_check.sh BUILD_DIR
# Symbols a compiler adds for its sanitizers or profiling (names starting with "__",
# e.g. ASan's __odr_asan_gen_*) follow their own reserved namespace and are ignored.
set -eu
build=$1
status=0

check() { # label, allowed-prefix regex, nm output
    bad=$(printf '%s\n' "$3" | awk -v ok="$2" 'NF == 3 && $3 !~ ok && $3 !~ /^__/ {print $3}' |
        sort -u)
    if [ -n "$bad" ]; then
        echo "$1 defines global symbols outside $2:"
        printf '  %s\n' $bad
        status=1
    else
        echo "$1: $(printf '%s\n' "$3" | awk 'NF == 3' | wc -l) global symbols, all $2"
    fi
}

static_lib="$build/libcwork.a"
shared_lib=$(readlink -e "$build/libcwork.so" 2>/dev/null || true)
test -f "$static_lib" || { echo "no $static_lib"; exit 1; }
test -n "$shared_lib" || { echo "no libcwork.so in $build"; exit 1; }

check libcwork.a '^(cwork_|cw_)' "$(nm -g --defined-only "$static_lib")"
check "$(basename "$shared_lib")" '^cwork_' "$(nm -D --defined-only "$shared_lib")"
exit $status
