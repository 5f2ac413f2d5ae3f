#!/bin/sh
# Every global symbol the libraries define is public (cwork_*) or internal (cw_*), so a
# program that links libcwork.a or libcwork-web.a never clashes on a name like
# job_decode or web_route; libcwork.so exports only cwork_* and the internal functions
# src/cwork.map lists for libcwork-web, libcwork-web.so only cwork_web_*. And each header
# declares exactly its library's functions: include/cwork.h what libcwork.so exports
# (so a program linking only libcwork finds no declaration it cannot link),
# include/cwork_web.h what libcwork-web.so exports.
#   symbols_check.sh BUILD_DIR [SOURCE_DIR]
# Symbols a compiler adds for its sanitizers or profiling (names starting with "__",
# e.g. ASan's __odr_asan_gen_*) follow their own reserved namespace and are ignored.
set -eu
build=$1
status=0

check() { # label, allowed-prefix regex, nm output[, how to say the regex]
    bad=$(printf '%s\n' "$3" | awk -v ok="$2" 'NF == 3 && $3 !~ ok && $3 !~ /^__/ {print $3}' |
        sort -u)
    if [ -n "$bad" ]; then
        echo "$1 defines global symbols outside ${4:-$2}:"
        printf '  %s\n' $bad
        status=1
    else
        echo "$1: $(printf '%s\n' "$3" | awk 'NF == 3' | wc -l) global symbols, all ${4:-$2}"
    fi
}

static_lib="$build/libcwork.a"
shared_lib=$(readlink -e "$build/libcwork.so" 2>/dev/null || true)
test -f "$static_lib" || { echo "no $static_lib"; exit 1; }
test -n "$shared_lib" || { echo "no libcwork.so in $build"; exit 1; }

# The internal functions libcwork.so exports for libcwork-web (src/cwork.map, between
# "for libcwork-web only" and "local:"), as one regex.
map=${2:-$(dirname "$0")/..}/src/cwork.map
private=$(sed -n '/for libcwork-web only/,/local:/p' "$map" | tr ' ;' '\n\n' |
    grep -E '^cw_[a-z_0-9]+$' | paste -sd'|')
check libcwork.a '^(cwork_|cw_)' "$(nm -g --defined-only "$static_lib")"
check "$(basename "$shared_lib")" "^(cwork_|($private)\$)" "$(nm -D --defined-only "$shared_lib")" \
    "cwork_* and cwork.map's list for libcwork-web"
# The functions a header declares: a line that starts with a type (not a comment, a
# typedef or a field) and names cwork_…( — the first such name on it.
declared() {
    awk '/^[a-z]/ && !/^typedef/ && match($0, /cwork_[a-z0-9_]+\(/) {
        print substr($0, RSTART, RLENGTH - 1) }' "$1" | sort -u
}
exported() { nm -D --defined-only "$1" | awk 'NF == 3 && $2 ~ /[TW]/ {print $3}' | sort -u; }
same_functions() { # header, library
    missing=$(comm -23 "$tmp/declared" "$tmp/exported")
    extra=$(comm -13 "$tmp/declared" "$tmp/exported")
    if [ -n "$missing" ] || [ -n "$extra" ]; then
        [ -z "$missing" ] || { echo "$1 declares functions $2 does not export:"; printf '  %s\n' $missing; }
        [ -z "$extra" ] || { echo "$2 exports functions $1 does not declare:"; printf '  %s\n' $extra; }
        status=1
    else
        echo "$1: $(wc -l <"$tmp/declared") functions, each exported by $2"
    fi
}
include=${2:-$(dirname "$0")/..}/include
tmp=$(mktemp -d /tmp/cwork-symbols.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
declared "$include/cwork.h" >"$tmp/declared"
exported "$shared_lib" | grep '^cwork_' >"$tmp/exported" || true
same_functions cwork.h "$(basename "$shared_lib")"
if [ -f "$build/libcwork-web.a" ]; then # (built unless -DCWORK_WEB=OFF)
    web_shared=$(readlink -e "$build/libcwork-web.so")
    check libcwork-web.a '^(cwork_|cw_)' "$(nm -g --defined-only "$build/libcwork-web.a")"
    check "$(basename "$web_shared")" '^cwork_web_' "$(nm -D --defined-only "$web_shared")"
    declared "$include/cwork_web.h" >"$tmp/declared"
    exported "$web_shared" >"$tmp/exported"
    same_functions cwork_web.h "$(basename "$web_shared")"
fi
exit $status
