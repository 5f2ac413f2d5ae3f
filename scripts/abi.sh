#!/bin/sh
# The ABI of libcwork.so and libcwork-web.so against the committed dumps
# abi/libcwork.abi and abi/libcwork-web.abi (libabigail's abidw/abidiff, Debian package
# abigail-tools; scripts/test.sh installs it). The internal cw_* functions libcwork.so
# exports for libcwork-web (src/cwork.map) are no part of it (abi/internal.suppr).
#
#   scripts/abi.sh check BUILD_DIR    # fails on an incompatible change (CTest abi_check)
#   scripts/abi.sh update BUILD_DIR   # rewrites the dumps from that build
#
# The dump describes the ABI the version in include/cwork.h promises: the last release's,
# or the one a deliberate break (with its version bump) set since. Removed or changed
# functions or variables (a changed public struct, enum or parameter changes the
# functions that use it) and a changed SONAME fail the check; additions are reported
# and pass. BUILD_DIR must be a build without sanitizers
# and with debug information (-g: the default RelWithDebInfo, or CMAKE_C_FLAGS=-g), so
# that abidw sees the types. docs/ABI.md is the policy this enforces: `check` also needs
# its history to have an entry for the dumps' version, and `update` refuses to write an
# incompatible dump under the same SONAME unless that entry says "unreleased".
set -eu

usage() { echo "usage: $0 check|update BUILD_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
mode=$1
build=$2
root=$(cd "$(dirname "$0")/.." && pwd)
suppr="$root/abi/internal.suppr"
policy="$root/docs/ABI.md"

# The number of incompatible changes in an abidiff report: anything removed or changed
# (after abidiff's filter of harmless changes), or a new SONAME. abidiff's exit status is
# a bit field (1 error, 2 usage error, 4 some change, 8 a change it is sure breaks
# callers); a changed public struct or parameter only sets 4, like an addition, so its
# summary lines decide.
breaks_in() { # REPORT
    printf '%s\n' "$1" | awk '
        /^ELF SONAME changed/ { n++ }
        /changes summary:/ {
            for (i = 2; i <= NF; i++)
                if (($(i) ~ /^Removed/ || $(i) ~ /^Changed/) && $(i - 1) + 0 > 0) n++
        }
        END { print n + 0 }'
}
# The version a SONAME carries: libcwork.so.0.2 -> 0.2.
version_of() { printf '%s\n' "${1##*.so.}"; }
# The dump's SONAME.
dump_soname() { sed -n "s/.* soname='\([^']*\)'.*/\1/p" "$1" | head -n 1; }
# Whether docs/ABI.md's history has an entry "### VERSION" (any status).
has_history() { grep -Eq "^### $(printf '%s' "$1" | sed 's/\./\\./g')( |\$)" "$policy"; }
# Whether that entry says the version is not released yet.
is_unreleased() { grep -Eq "^### $(printf '%s' "$1" | sed 's/\./\\./g') .*unreleased" "$policy"; }

for tool in abidw abidiff readelf; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "$tool not found: install Debian's abigail-tools (and binutils)" >&2; exit 1; }
done
one() { # NAME (libcwork, libcwork-web)
    name=$1
    lib=$(readlink -e "$build/$name.so" 2>/dev/null || true)
    [ -n "$lib" ] || { echo "no $name.so in $build" >&2; return 1; }
    dump="$root/abi/$name.abi"
    readelf -S "$lib" | grep -q '\.debug_info' ||
        { echo "$lib has no debug information: build with -g (e.g. RelWithDebInfo)" >&2; return 1; }

    case $mode in
    update)
        # An incompatible change is written only with a new SONAME (a version bump) or
        # into a version that is not released yet (docs/ABI.md, "What bumps the SONAME").
        if [ -f "$dump" ]; then
            status=0
            report=$(abidiff --suppr "$suppr" --headers-dir2 "$root/include" "$dump" "$lib") || status=$?
            if [ $((status & 3)) -ne 0 ]; then
                printf '%s\n' "$report"
                echo "abidiff failed (status $status)" >&2
                return 1
            fi
            old=$(dump_soname "$dump")
            new=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
            if { [ $((status & 8)) -ne 0 ] || [ "$(breaks_in "$report")" -gt 0 ]; } &&
                [ "$old" = "$new" ] && ! is_unreleased "$(version_of "$new")"; then
                printf '%s\n' "$report"
                echo "REFUSED: the change above breaks the ABI of released $new. Bump the" \
                    "version in include/cwork.h (the minor while 0.x) and add its entry to" \
                    "docs/ABI.md's history, or undo the change." >&2
                return 1
            fi
        fi
        # Locations are kept short and paths out, so that the dump does not depend on where
        # the tree was built; types outside include/ are dropped.
        abidw --headers-dir "$root/include" --drop-private-types --drop-undefined-syms --suppr "$suppr" \
            --no-corpus-path --no-comp-dir-path --short-locs --no-elf-needed \
            --type-id-style hash --out-file "$dump" "$lib"
        echo "wrote $dump from $lib"
        ;;
    check)
        [ -f "$dump" ] || { echo "no $dump: run '$0 update' on the last release" >&2; return 1; }
        version=$(version_of "$(dump_soname "$dump")")
        has_history "$version" || {
            echo "docs/ABI.md has no history entry '### $version' for the SONAME of $dump:" \
                "write what that version changed" >&2
            return 1
        }
        status=0
        report=$(abidiff --suppr "$suppr" --headers-dir2 "$root/include" "$dump" "$lib") || status=$?
        printf '%s\n' "$report"
        if [ $((status & 3)) -ne 0 ]; then
            echo "abidiff failed (status $status)" >&2
            return 1
        fi
        breaks=$(breaks_in "$report")
        if [ $((status & 8)) -ne 0 ] || [ "$breaks" -gt 0 ]; then
            echo "INCOMPATIBLE ABI change against abi/$name.abi (above). Undo it, or make it" \
                "deliberately as docs/ABI.md says: bump the version in include/cwork.h (the minor" \
                "while 0.x; not needed while its history entry says unreleased), then run" \
                "scripts/abi.sh update and commit the dumps with the change." >&2
            return 1
        elif [ $((status & 4)) -ne 0 ]; then
            echo "compatible ABI additions against abi/$name.abi (above): fine;" \
                "the dump takes them at the next release"
        else
            echo "ABI identical to abi/$name.abi"
        fi
        ;;
    *) usage ;;
    esac
}

rc=0
one libcwork || rc=1
# (libcwork-web is built unless -DCWORK_WEB=OFF)
if [ -e "$build/libcwork-web.so" ]; then one libcwork-web || rc=1; fi
exit $rc
