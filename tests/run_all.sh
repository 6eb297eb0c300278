#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds, and runs every test: the release
# build's suite, then the engine and CLI suites again under AddressSanitizer
# and UndefinedBehaviorSanitizer. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash installer/setup-debian.sh

jobs=$(nproc)
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

# Sanitizers: the same tests, built with -fsanitize=address,undefined.
# Leak checking is off because Mesa's lavapipe keeps driver-global
# allocations alive until exit; UBSan aborts on the first report.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cmake --preset asan
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -LE gui
