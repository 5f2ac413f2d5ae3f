#!/bin/sh
# The README's C programs (each ```c block with a main) compile with -Wall -Wextra
# -Werror against include/cwork.h: a quick start that warns, or that no longer matches
# the API, fails here.
#   readme_examples_check.sh SOURCE_DIR [CC]
set -eu
src=$1
cc=${2:-cc}
dir=$(mktemp -d /tmp/cwork-readme.XXXXXX)
trap 'rm -rf "$dir"' EXIT
awk -v dir="$dir" '
    /^```c$/ { n++; inside = 1; file = dir "/example" n ".c"; next }
    /^```$/ { inside = 0; next }
    inside { print > file }
' "$src/README.md"
count=0
for f in "$dir"/example*.c; do
    [ -f "$f" ] || continue
    grep -q 'int main' "$f" || continue
    count=$((count + 1))
    "$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only -I"$src/include" "$f" ||
        { echo "FAIL: README example $(basename "$f") does not compile cleanly:"; cat -n "$f"; exit 1; }
done
[ "$count" -gt 0 ] || { echo "FAIL: no C program found in README.md"; exit 1; }
echo "ok: $count README program(s)"
