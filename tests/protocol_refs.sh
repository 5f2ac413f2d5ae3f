#!/usr/bin/env bash
# The wire contract lives in the repository (docs/PROTOCOL.md) and code, tests and docs
# cite it by section. This test fails when
#   - a file still cites the old contract outside the repository (by its file name, or
#     as "SPEC" followed by a section number, with or without the section sign), or
#   - a section sign with a number (§N or §N.M) anywhere names a section that is not a
#     heading of docs/PROTOCOL.md: every § in this repository is a PROTOCOL citation,
#     bare continuations included ("PROTOCOL §2.1, §17.2"). A section of another
#     document is written out ("RFC 9110 section 15") or as "RFC NNNN §N", which is
#     skipped.
# docs/PROTOCOL.md's own citations are checked too.
# Offenders are listed as file:line. Before the real tree the check runs on a small tree
# with known offenders, so that a check that finds nothing cannot pass by accident (that
# tree is written through $S and $O so that this file does not cite anything itself).
#   protocol_refs.sh SOURCE_DIR
# Exit status: 0 passed, 1 failed.
set -u
src=${1:?usage: protocol_refs.sh SOURCE_DIR}
export LC_ALL=C # byte matching: § is the two bytes C2 A7 in every file here

# The files to look at, one path a line, relative to $1: git's list when $1 is a work
# tree, else every file outside .git, build and node_modules directories (a tarball).
list_files() {
    if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$1" ls-files
    else
        (cd "$1" && find . -type d \( -name .git -o -name 'build*' -o -name node_modules \) \
            -prune -o -type f -print | sed 's|^\./||')
    fi
}

# check_tree DIR: prints one "file:line: why" per offender; status 1 when there is one.
check_tree() {
    local dir=$1 protocol=$1/docs/PROTOCOL.md out
    if [ ! -f "$protocol" ]; then
        echo "docs/PROTOCOL.md: missing"
        return 1
    fi
    local headings
    headings=$(grep -oE '^#{2,3} §[0-9]+(\.[0-9]+)*' "$protocol" | sed 's/^#* //')
    out=$(
        cd "$dir" || exit 1
        list_files . | grep -vxF 'docs/PROTOCOL.md' | tr '\n' '\0' >"$tmp/files"
        # The old contract, by name or by its citation forms (written so that this file
        # does not match itself).
        xargs -0 -r grep -sHnIE \
            'SPEC[.]md|shared[/]SPEC|(^|[^A-Za-z0-9_])SPEC[[:space:]]+(§)?[0-9]' <"$tmp/files" |
            sed -E 's|^([^:]*:[0-9]+:)|\1 cites the old contract: |'
        xargs -0 -r grep -sHnIoE '(RFC[[:space:]]+[0-9]+[[:space:]]+)?§[0-9]+(\.[0-9]+)*' \
            <"$tmp/files" | grep -v ':RFC'
        # docs/PROTOCOL.md cites itself too.
        awk '{print FILENAME ":" FNR ":" $0}' docs/PROTOCOL.md |
            grep -oE '^[^:]*:[0-9]+:|§[0-9]+(\.[0-9]+)*' |
            awk '/:$/{where=$0; next} {print where $0}'
    )
    local bad
    bad=$(printf '%s\n' "$out" | awk -v heads="$headings" '
        BEGIN { n = split(heads, h, "\n"); for (i = 1; i <= n; i++) known[h[i]] = 1 }
        / cites the old contract: / { print; next }
        NF {
            sec = $0; sub(/^.*:/, "", sec)
            where = $0; sub(/:[^:]*$/, "", where)
            if (!(sec in known)) print where ": " sec " is not a heading of docs/PROTOCOL.md"
        }')
    if [ -n "$bad" ]; then
        printf '%s\n' "$bad"
        return 1
    fi
    return 0
}

failed=0

# The check itself: a tree with one offender of each kind and clean citations beside.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/src"
S=$'\xc2\xa7' # the section sign
O=SPEC
printf '# contract\n\n## %s1 One\n\n### %s1.2 Two\n\nsee %s1.2, %s1 and %s3\n' \
    "$S" "$S" "$S" "$S" "$S" >"$tmp/docs/PROTOCOL.md"
{
    echo "/* fine: PROTOCOL ${S}1.2, ${S}1 and RFC 9110 ${S}15 */"
    echo "/* old: $O ${S}1 */"
    echo "/* old: see ../shared/$O.md */"
    echo "/* old: $O 2.2 */"
    echo "/* gone: PROTOCOL ${S}1.3, and ${S}2 */"
    echo "#define TIMES_PER_$O 3 /* not a citation */"
} >"$tmp/src/a.c"
got=$(check_tree "$tmp")
status=$?
want="src/a.c:2: cites the old contract: /* old: $O ${S}1 */
src/a.c:3: cites the old contract: /* old: see ../shared/$O.md */
src/a.c:4: cites the old contract: /* old: $O 2.2 */
src/a.c:5: ${S}1.3 is not a heading of docs/PROTOCOL.md
src/a.c:5: ${S}2 is not a heading of docs/PROTOCOL.md
docs/PROTOCOL.md:7: ${S}3 is not a heading of docs/PROTOCOL.md"
if [ "$status" != 1 ] || [ "$got" != "$want" ]; then
    echo "FAIL the check on a tree with known offenders (status $status) reported:"
    printf '%s\n' "$got"
    echo "instead of:"
    printf '%s\n' "$want"
    failed=1
fi

# The real tree.
if ! got=$(check_tree "$src"); then
    echo "FAIL citations that do not point into docs/PROTOCOL.md:"
    printf '%s\n' "$got"
    failed=1
fi

[ "$failed" = 0 ] && echo "passed: every § citation names a heading of docs/PROTOCOL.md"
exit "$failed"
