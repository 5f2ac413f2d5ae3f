#!/bin/sh
# Installs the build into a temporary prefix and builds a program against it twice:
# through pkg-config and through the CMake package. Also checks that the shared
# library exports only cwork_ symbols and carries the SONAME the header's version asks
# for: libcwork.so.0.MINOR while the version is 0.x, libcwork.so.MAJOR from 1.0 on.
#   install_check.sh BUILD_DIR SOURCE_DIR
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
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name "$so" -printf '%h\n' | head -n 1)
test -n "$libdir" || { echo "$so not installed"; exit 1; }
test -f "$prefix/include/cwork.h"
test -f "$libdir/libcwork.a"
test -f "$libdir/pkgconfig/cwork.pc"
test -f "$libdir/cmake/cwork/cworkConfig.cmake"

soname=$(objdump -p "$libdir/$so" | awk '/SONAME/ {print $2}')
test "$soname" = "$so" || { echo "SONAME is '$soname', not $so"; exit 1; }
bad=$(nm -D --defined-only "$libdir/$so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^cwork_/ {print $3}')
test -z "$bad" || { echo "exported non-cwork symbols: $bad"; exit 1; }

# pkg-config consumer (the shared library)
PKG_CONFIG_PATH="$libdir/pkgconfig" cc -std=c11 -Wall -Werror -o "$prefix/pc_example" \
    "$src/examples/enqueue.c" $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs cwork)
LD_LIBRARY_PATH="$libdir" ldd "$prefix/pc_example" | grep -q "$so "

# CMake consumer (the static library)
mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(cwork REQUIRED)
add_executable(consumer $src/examples/enqueue.c)
target_link_libraries(consumer PRIVATE cwork::cwork_static)
EOC
# The sanitizer flags of the build under test must not leak into this separate build.
env -u CFLAGS -u LDFLAGS cmake -S "$prefix/consumer" -B "$prefix/consumer/build" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer/build" >/dev/null
test -x "$prefix/consumer/build/consumer"
echo "1 passed, 0 failed"
