#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds, and runs every test: the release
# build's suite; the engine-only preset (no Qt) and a plain Release build
# without presets must build; then the engine and CLI suites again under
# AddressSanitizer and UndefinedBehaviorSanitizer; then a short run (a
# minute per harness) of the libFuzzer harnesses over their kept corpora and
# regression inputs. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash installer/setup-debian.sh

jobs=$(nproc)
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

# The engine-only build the GPU check machine makes (no Qt: Qt is hidden
# from CMake here, so a Qt dependency creeping into the engine, the run log
# or workbench-cli fails this step), warnings as errors at -O3.
cmake --preset engine -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON
cmake --build --preset engine -j "$jobs"

# The build a user or packager makes without presets: plain Release (-O3),
# no -Werror (WB_WERROR is off by default).
cmake -S . -B build/plain-release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/plain-release -j "$jobs"

# Sanitizers: the same tests, built with -fsanitize=address,undefined.
# Leak checking is off because Mesa's lavapipe keeps driver-global
# allocations alive until exit; UBSan aborts on the first report.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cmake --preset asan
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -LE gui

# Fuzzing: every regression input replayed, then a fixed seed and number of
# inputs per harness (repeatable; about a minute each); a finding's input is
# kept in tests/fuzz/regressions.
bash tests/fuzz/run_ci.sh
