#!/usr/bin/env bash
# The README's first command, scripts/demo.sh, installs cwork_build_packages
# (scripts/packages.sh) and builds. This test fails when the build requires a pkg-config
# module (pkg_check_modules / pkg_search_module in any CMakeLists.txt or *.cmake) whose
# Debian package is not in that list — on a fresh machine the demo would stop with
# "A required package was not found". Each module is mapped to its package through the
# .pc file that pkg-config finds and `dpkg -S`. It also checks that the check itself
# fails on a package list missing one package, and how it reads CMake's syntax.
#   packages_check.sh SOURCE_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (no dpkg or pkg-config: not Debian).
set -u
src=${1:?usage: packages_check.sh SOURCE_DIR}
command -v dpkg >/dev/null 2>&1 || { echo "skipped: no dpkg"; exit 77; }
command -v pkg-config >/dev/null 2>&1 || { echo "skipped: no pkg-config"; exit 77; }

failed=0
fail() {
    echo "FAIL $*"
    failed=1
}

# The module names in CMake text on stdin: the arguments of pkg_check_modules and
# pkg_search_module after the prefix, without keywords and version constraints.
modules_in() {
    sed 's/#.*//' | tr '\n"' '  ' |
        grep -oiE 'pkg_(check_modules|search_module)[[:space:]]*\([^)]*\)' |
        sed -E 's/^[^(]*\(//; s/\)$//' |
        while read -r _prefix rest; do
            for word in $rest; do
                case "$word" in
                REQUIRED | QUIET | IMPORTED_TARGET | GLOBAL | NO_CMAKE_PATH | \
                    NO_CMAKE_ENVIRONMENT_PATH) ;;
                [\<\>=0-9]*) ;; # the rest of a quoted "name >= 1.0"
                *) echo "${word%%[<>=]*}" ;;
                esac
            done
        done | sort -u
}

# The Debian package that installed module's .pc file, or nothing.
package_of() {
    local dir pc owner
    dir=$(pkg-config --variable=pcfiledir "$1" 2>/dev/null) || return 0
    pc="$dir/$1.pc"
    # (merged /usr: dpkg may know the file under its other name)
    owner=$(dpkg -S "$pc" 2>/dev/null) || owner=$(dpkg -S "$(readlink -f "$pc")" 2>/dev/null) ||
        return 0
    owner=${owner%%$'\n'*} # "libhiredis-dev:amd64: /usr/lib/.../hiredis.pc"
    echo "${owner%%:*}"
}

# Prints "module package" for every module whose package is not among the remaining
# arguments; "module ?" when no installed package provides it.
uncovered() {
    local modules=$1 mod pkg
    shift
    for mod in $modules; do
        pkg=$(package_of "$mod")
        if [ -z "$pkg" ]; then
            echo "$mod ?"
            continue
        fi
        case " $* " in
        *" $pkg "*) ;;
        *) echo "$mod $pkg" ;;
        esac
    done
}

# ---------------------------------------------------------------- CMake syntax
got=$(printf '%s\n' \
    'pkg_check_modules(FOO REQUIRED IMPORTED_TARGET foo>=1.2 bar)' \
    '# pkg_check_modules(OLD REQUIRED old)' \
    'pkg_search_module(BAZ' '  QUIET baz<=3 baz2)' \
    'pkg_check_modules(Q REQUIRED "qux >= 2.0")' | modules_in | tr '\n' ' ')
[ "$got" = "bar baz baz2 foo qux " ] && echo "ok   modules read from CMake text" ||
    fail "modules read from CMake text: got '$got', want 'bar baz baz2 foo qux '"

# ---------------------------------------------------------------- the build's modules
# shellcheck source=../scripts/packages.sh
. "$src/scripts/packages.sh"
modules=$(find "$src" \( -name build -o -name node_modules -o -name .git \) -prune -o \
    \( -name CMakeLists.txt -o -name '*.cmake' \) -type f -print | sort | xargs cat | modules_in)
[ -n "$modules" ] && echo "ok   the build requires: $(echo $modules)" ||
    fail "found no pkg_check_modules in $src"

missing=$(uncovered "$modules" "${cwork_build_packages[@]}")
if [ -z "$missing" ]; then
    echo "ok   cwork_build_packages (${cwork_build_packages[*]}) covers every module"
else
    while read -r mod pkg; do
        if [ "$pkg" = "?" ]; then
            fail "pkg-config module $mod is not installed: find its Debian package" \
                 "(apt-file search /$mod.pc) and add it to cwork_build_packages in" \
                 "scripts/packages.sh"
        else
            fail "the build requires pkg-config module $mod (Debian package $pkg), but" \
                 "cwork_build_packages in scripts/packages.sh does not install $pkg:" \
                 "scripts/demo.sh fails on a fresh machine"
        fi
    done <<<"$missing"
fi

# demo.sh must install that very list.
grep -q '^cwork_install_missing "${cwork_build_packages\[@\]}"' "$src/scripts/demo.sh" &&
    echo "ok   scripts/demo.sh installs cwork_build_packages" ||
    fail "scripts/demo.sh does not run cwork_install_missing \"\${cwork_build_packages[@]}\""

# The README says what the two commands install.
for p in "${cwork_build_packages[@]}" "${cwork_test_packages[@]}"; do
    grep -q -- "$p" "$src/README.md" ||
        fail "README.md does not mention $p, which scripts/packages.sh installs"
done

# ---------------------------------------------------------------- the check can fail
first=$(echo "$modules" | head -n 1)
drop=$(package_of "$first")
fewer=()
for p in "${cwork_build_packages[@]}"; do
    [ "$p" = "$drop" ] || fewer+=("$p")
done
got=$(uncovered "$first" "${fewer[@]}")
[ "$got" = "$first $drop" ] && echo "ok   without $drop the check names module $first" ||
    fail "without $drop the check reported '$got', want '$first $drop'"

[ $failed -eq 0 ] && echo "passed" || echo "failed"
exit $failed
