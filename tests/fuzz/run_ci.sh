#!/usr/bin/env bash
# The fuzzing step of CI (tests/run_all.sh): builds the libFuzzer harnesses
# with clang (ASan + UBSan), replays every regression input, then fuzzes each
# harness starting from the corpus kept in the repository
# (tests/fuzz/corpus/<fuzzer>) plus fresh seeds from tests/data.
#
# By default the fuzzing repeats exactly: a fixed seed (FUZZ_SEED, default
# 1) and a fixed number of inputs per harness (about 20 s each on two
# cores), so the step fails only when the code changed, and a finding comes
# back when the step is rerun. FUZZ_SECONDS=N instead fuzzes each harness
# for N seconds from a random seed: for exploring, not for gating a change.
#
# A finding (crash, sanitizer report, hang, allocation past the limits, an
# error message that does not name the file) fails the step. Its input is
# copied into tests/fuzz/regressions/<fuzzer>-crash-<sha1> so it is kept as
# a regression input: commit it with the fix. New corpus entries go to
# build/fuzz/corpus-new/<fuzzer> (not into the tree); `--merge` folds them
# into tests/fuzz/corpus (minimized) for committing.
#
# usage: tests/fuzz/run_ci.sh [--merge]   env: FUZZ_SEED, FUZZ_SECONDS, FUZZ_ONLY="gguf vocab"
set -euo pipefail
cd "$(dirname "$0")/../.."

merge=0
[ "${1:-}" = "--merge" ] && merge=1
seconds=${FUZZ_SECONDS:-}
seed=${FUZZ_SEED:-1}
fuzzers=(${FUZZ_ONLY:-gguf vocab tokenize prompt_file testset chat_template request_parse http answer})
build=build/fuzz
cxx=$(command -v clang++-14 || command -v clang++ || true)
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cxx" ] || [ -z "$cc" ]; then
    echo "fuzz: clang is missing (bash installer/setup-debian.sh installs clang-14)" >&2
    exit 1
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
      -DWB_FUZZ=ON -DWB_BUILD_APP=OFF -DWB_BUILD_TESTS=OFF > "$build.configure.log"
cmake --build "$build" --target wb_fuzzers -j "$(nproc)"
rm -rf "$build/seeds"
python3 tests/fuzz/make_seeds.py tests/data "$build/seeds"

# Limits as in README.md: GGUF and vocab files up to 64 KiB.
declare -A max_len=([gguf]=65536 [vocab]=65536 [tokenize]=4096 [prompt_file]=16384 [testset]=16384 [chat_template]=16384
                  [request_parse]=16384 [http]=16384 [answer]=16384)
# Inputs per harness in the repeatable mode: about 20 s each on two cores
# (executions per second differ 8x between the harnesses), so the whole of
# CI fits its time; FUZZ_SECONDS explores for longer.
# chat_template's kept corpus holds recipes (inputs that expand to deep
# nesting, long chains and growth loops, each run to a limit): about 40
# inputs a second under ASan, so fewer of them. request_parse (server
# request bodies): about 4000 a second; http (raw HTTP, one connection
# an input) and answer (what a server answers the load client) about as many.
declare -A runs=([gguf]=25000 [vocab]=25000 [tokenize]=70000 [prompt_file]=170000 [testset]=50000 [chat_template]=3000
                 [request_parse]=80000 [http]=80000 [answer]=80000)
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:symbolize=1
status=0
for f in "${fuzzers[@]}"; do
    bin="$build/tests/fuzz/fuzz_$f"
    corpus=tests/fuzz/corpus/$f
    fresh=$build/corpus-new/$f
    artifacts=$build/artifacts/$f
    mkdir -p "$corpus" "$fresh" "$artifacts"
    # 1. Every regression input of this fuzzer, no mutation.
    shopt -s nullglob
    regs=(tests/fuzz/regressions/$f-*)
    shopt -u nullglob
    if [ "${#regs[@]}" -gt 0 ]; then
        echo "fuzz $f: replaying ${#regs[@]} regression inputs"
        "$bin" -rss_limit_mb=2048 -timeout=10 "${regs[@]}" > "$build/replay-$f.log" 2>&1 || {
            echo "fuzz $f: a regression input fails again:" >&2
            tail -30 "$build/replay-$f.log" >&2
            status=1
            continue
        }
    fi
    # 2. Fuzz for a while from the kept corpus and fresh seeds.
    if [ -n "$seconds" ]; then
        budget=(-max_total_time="$seconds")
        echo "fuzz $f: ${seconds} s, random seed"
    else
        # An empty folder for new inputs each time, or a rerun would start
        # from a different corpus and not repeat.
        rm -rf "$fresh" && mkdir -p "$fresh"
        budget=(-seed="$seed" -runs="${runs[$f]}")
        echo "fuzz $f: ${runs[$f]} inputs, seed $seed"
    fi
    dict=()
    [ -f "tests/fuzz/$f.dict" ] && dict=(-dict="tests/fuzz/$f.dict")
    if ! "$bin" "$fresh" "$corpus" "$build/seeds/$f" "${budget[@]}" "${dict[@]}" \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -max_len="${max_len[$f]}" \
        -artifact_prefix="$artifacts/" -print_final_stats=1 > "$build/fuzz-$f.log" 2>&1; then
        status=1
        echo "fuzz $f: FINDING" >&2
        tail -40 "$build/fuzz-$f.log" >&2
        for a in "$artifacts"/*; do
            [ -f "$a" ] || continue
            kept=tests/fuzz/regressions/$f-$(basename "$a")
            cp "$a" "$kept"
            echo "fuzz $f: input kept as $kept (commit it with the fix)" >&2
        done
    fi
    grep -E "^stat::(number_of_executed_units|new_units_added)" "$build/fuzz-$f.log" | tr '\n' ' '
    echo
    if [ "$merge" = 1 ]; then
        mkdir -p "$build/merged/$f"
        "$bin" -merge=1 "$build/merged/$f" "$corpus" "$fresh" -max_len="${max_len[$f]}" \
            -rss_limit_mb=2048 -timeout=10 > "$build/merge-$f.log" 2>&1
        rm -rf "$corpus" && mv "$build/merged/$f" "$corpus"
        echo "fuzz $f: corpus now $(ls "$corpus" | wc -l) inputs"
    fi
done
exit "$status"
