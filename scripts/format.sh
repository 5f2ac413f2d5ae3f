#!/usr/bin/env bash
# Formats the project's C files with clang-format and .clang-format.
#
#   ./scripts/format.sh           rewrites every file that is not formatted
#   ./scripts/format.sh --check   lists the files that are not formatted (and how many
#                                 lines would change); exit status 1 when there are any
#   ./scripts/format.sh [--check] FILE...   only these files
#
# The files are the tracked *.c and *.h of src/, include/, cli/, tests/, bench/ and
# examples/ (every *.c and *.h there outside a git checkout). CLANG_FORMAT chooses the
# binary; the default is Debian 12's clang-format-14, the version .clang-format was
# tuned for (another version may format a few constructs differently).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
case "${1:-}" in
-h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
-*)
    echo "usage: $0 [--check] [FILE...]" >&2
    exit 2
    ;;
esac

fmt=${CLANG_FORMAT:-}
if [ -z "$fmt" ]; then
    for c in clang-format-14 clang-format; do
        if command -v "$c" >/dev/null 2>&1; then
            fmt=$c
            break
        fi
    done
fi
[ -n "$fmt" ] || { echo "clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }

dirs=(src include cli tests bench examples)
files=()
if [ $# -gt 0 ]; then
    files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    while IFS= read -r f; do
        [ -f "$f" ] && files+=("$f")
    done < <(git ls-files -- "${dirs[@]/%//*.c}" "${dirs[@]/%//*.h}")
else
    while IFS= read -r f; do
        files+=("$f")
    done < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) -not -path '*/node_modules/*' | sort)
fi

if [ $check -eq 0 ]; then
    changed=0
    for f in "${files[@]}"; do
        if ! "$fmt" --style=file "$f" | cmp -s - "$f"; then
            "$fmt" --style=file -i "$f"
            echo "formatted $f"
            changed=$((changed + 1))
        fi
    done
    echo "clang-format: $changed of ${#files[@]} files rewritten"
    exit 0
fi

bad=0
lines=0
for f in "${files[@]}"; do
    n=$("$fmt" --style=file "$f" | diff "$f" - | grep -c '^>' || true)
    if [ "$n" -gt 0 ]; then
        echo "$f: $n lines differ"
        bad=$((bad + 1))
        lines=$((lines + n))
    fi
done
if [ $bad -gt 0 ]; then
    echo "clang-format: $bad of ${#files[@]} files are not formatted ($lines lines); run ./scripts/format.sh" >&2
    exit 1
fi
echo "clang-format: all ${#files[@]} files formatted"
