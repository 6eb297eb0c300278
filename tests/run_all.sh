#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds, and runs every test: the suite of a
# plain Release build without presets (-O3, warnings as errors); the engine-only
# preset (no Qt) must build; the CPU-only build (no Vulkan) builds and passes
# its tests; then the engine and CLI suites again under
# AddressSanitizer and UndefinedBehaviorSanitizer; then a short, repeatable
# run of the libFuzzer harnesses over their kept corpora and regression
# inputs. Exits non-zero on the first failure. Each step prints how long it
# took, so a slow step shows in CI's log (CI stops a run at 90 minutes on two
# cores; this takes about an hour there).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "== run_all: $name"
  "$@"
  echo "== run_all: $name done in $((SECONDS - t0)) s ($((SECONDS - started)) s in all)"
}

jobs=$(nproc)
step "setup" bash installer/setup-debian.sh

# Every build goes through ccache (installed by the setup): the engine-only
# build compiles the same engine sources with the same flags as the release
# build, so its objects come from the cache. Paths are hashed relative to the
# checkout, so the three build folders share entries. The launcher changes
# no compiler flag or output.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$PWD"
fi

# The build a user or packager makes without presets, plain Release (-O3),
# with warnings as errors added (without -DWB_WERROR=ON, the default, the
# same build only has fewer ways to fail). It is exactly what the release
# preset configures, in the preset's folder, so `ctest --preset release`
# runs its suite.
step "release: configure (no preset)" \
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_WERROR=ON
step "release: build" cmake --build build/release -j "$jobs"
step "release: tests" ctest --preset release -j "$jobs"

# The engine-only build the GPU check machine makes (no Qt: Qt is hidden
# from CMake here, so a Qt dependency creeping into the engine, the run log
# or workbench-cli fails this step), warnings as errors at -O3.
step "engine: configure" cmake --preset engine -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON
step "engine: build" cmake --build --preset engine -j "$jobs"

# The CPU-only build (-DWB_VULKAN=OFF): the engine without its Vulkan
# executor, workbench-cli and their tests. Vulkan is hidden from CMake, so a
# Vulkan dependency creeping outside engine/exec/vk fails this step; the
# tests that need a Vulkan device are not built.
step "cpu-only: configure" cmake --preset cpu -DCMAKE_DISABLE_FIND_PACKAGE_Vulkan=ON
step "cpu-only: build" cmake --build --preset cpu -j "$jobs"
step "cpu-only: tests" ctest --preset cpu -j "$jobs"

# Sanitizers: the engine, run log and CLI tests (no GUI) built with
# -fsanitize=address,undefined at -O1. Leak checking is off because Mesa's
# lavapipe keeps driver-global allocations alive until exit; UBSan aborts on
# the first report.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step "asan: configure" cmake --preset asan
step "asan: build" cmake --build --preset asan -j "$jobs"
step "asan: tests" ctest --preset asan -j "$jobs" -LE gui

# Fuzzing: every regression input replayed, then a fixed seed and number of
# inputs per harness (repeatable; about 20 s each); a finding's input is
# kept in tests/fuzz/regressions.
step "fuzz" bash tests/fuzz/run_ci.sh
