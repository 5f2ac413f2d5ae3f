#!/bin/sh
# Builds cwork the way a parent project vendors it: add_subdirectory() from a CMake
# project of its own, in a source tree that is not cwork's, then links an example
# against the cwork::cwork alias. Catches paths written as CMAKE_SOURCE_DIR or
# CMAKE_BINARY_DIR (they name the parent's directories there: the globs come back empty
# or the generated files land in the parent's build tree) and cwork's own targets leaking
# into the parent (tests, benches).
#   subproject_check.sh SOURCE_DIR
set -eu
src=$1
parent=$(mktemp -d /tmp/cwork-subproject.XXXXXX)
trap 'rm -rf "$parent"' EXIT

mkdir -p "$parent/app"
cp "$src/examples/enqueue.c" "$parent/app/main.c"
cat > "$parent/app/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.18)
project(parent C)
add_subdirectory("$src" third_party/cwork)
add_executable(app main.c)
target_link_libraries(app PRIVATE cwork::cwork)
EOC
fail() {
    echo "FAIL: $*"
    exit 1
}
# The sanitizer flags of the build under test must not leak into this separate build.
env -u CFLAGS -u LDFLAGS cmake -S "$parent/app" -B "$parent/build" >"$parent/configure.log" 2>&1 ||
    { cat "$parent/configure.log"; fail "configuring the parent project"; }
cmake --build "$parent/build" --target app -j 2 >"$parent/build.log" 2>&1 ||
    { tail -n 40 "$parent/build.log"; fail "building the parent project"; }
test -x "$parent/build/app" || fail "no app binary"

# What cwork generates belongs in its own binary directory, not the parent's.
test -f "$parent/build/third_party/cwork/generated/scripts/scripts.h" ||
    fail "generated scripts are not under cwork's binary directory"
for f in generated cwork.pc cworkConfig.cmake cworkConfigVersion.cmake; do
    test ! -e "$parent/build/$f" || fail "cwork wrote $f into the parent's binary directory"
done
# A parent does not inherit cwork's tests or benchmarks.
tests=$(cd "$parent/build" && ctest -N 2>/dev/null | awk '/Total Tests:/ {print $3}')
test "${tests:-0}" = 0 || fail "the parent project got $tests of cwork's tests"
if cmake --build "$parent/build" --target help 2>/dev/null | grep -Eq '(^| )(bench_pool|test_pool|example_enqueue)($| )'; then
    fail "the parent project got cwork's test, bench or example targets"
fi
echo "1 passed, 0 failed"
