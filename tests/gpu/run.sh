#!/bin/bash
# GPU check, one call on a machine with a real GPU (an NVIDIA H200 with no
# Qt and no Vulkan SDK installed), from a checkout there:
#   bash tests/gpu/run.sh [build/gpu-bundle.tar.xz]
# Unpacks the bundle made here by tests/gpu/prepare.sh, finds a Vulkan
# loader and driver, then, in this order, each step cut short so the whole
# stays inside WB_GPU_BUDGET_S seconds (default 500, for a 600 s command):
#   1. correctness: the shader tests, the forward pass against llama.cpp's
#      goldens, the architecture goldens, barrier placement / replay and the
#      scheduler's batch invariance, validation layer on when carried;
#   2. figures: real-shape synthetic models written by `workbench-cli synth`
#      (Mistral-7B and TinyLlama-1.1B shapes; F16, Q8_0, Q4_0, Q4_K_M), each
#      benched (pp512 / tg128, JSON) and deleted, 7B Q4_0 first (the goal
#      figures), the per-op profile of one 7B decode step, cold start of the
#      7B file, `bench --concurrency 1,8,32` on 7B Q4_K_M;
#   3. a summary table (device line, figures, share of memory bandwidth).
# Output, at most 8 files (what the device machine sends back), written as
# it goes so a cut-short run still returns what it did: summary.txt,
# tests.log, bench.jsonl, bench.log, synth.log, devices.txt. Folder: $OUT
# when the caller sets it, else /tmp/wb-gpu-out.
#
# WB_GPU_DRY_RUN=1 runs every step on tiny shapes on any device (lavapipe
# here): one-layer TinyLlama-shaped models with a 512-token vocabulary,
# short benches, a few quick tests; it checks the script's CPU-side parts
# before device time is spent.
set -u
BUNDLE=${1:-build/gpu-bundle.tar.xz}
LOGS=${OUT:-/tmp/wb-gpu-out}
DRY=${WB_GPU_DRY_RUN:-0}
BUDGET=${WB_GPU_BUDGET_S:-500}
WORK=${WB_GPU_WORK:-/tmp/wb-gpu}
START=$SECONDS
mkdir -p "$LOGS"
rm -rf "$WORK" && mkdir -p "$WORK"
SUMMARY=$LOGS/summary.txt
: >"$SUMMARY"
: >"$LOGS/tests.log"
: >"$LOGS/bench.jsonl"
: >"$LOGS/bench.log"
: >"$LOGS/synth.log"
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# limit SECONDS: the smaller of SECONDS and what is left of the budget
# minus 15 s for the summary; 0 when nothing is left.
limit() {
  local l=$(($(left) - 15))
  if [ "$l" -le 0 ]; then echo 0; elif [ "$1" -lt "$l" ]; then echo "$1"; else echo "$l"; fi
}

if [ ! -f "$BUNDLE" ]; then say "run.sh: no bundle $BUNDLE (run tests/gpu/prepare.sh first)"; exit 1; fi
tar -xJf "$BUNDLE" -C "$WORK" || exit 1
B=$WORK/gpu-bundle

# Vulkan loader: Debian packages sent along in .gl first, else the bundled one.
if [ -d .gl ] && [ "$(id -u)" = 0 ] && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  say "run.sh: no system Vulkan loader; using the bundled libvulkan.so.1"
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/vulkan
fi
export WB_TEST_DATA_DIR=${WB_TEST_DATA_DIR:-$B/data}
export XDG_CACHE_HOME=$WORK/cache XDG_DATA_HOME=$WORK/data XDG_CONFIG_HOME=$WORK/config
if [ -f "$B/layers/VkLayer_khronos_validation.json" ]; then
  export VK_LAYER_PATH=$B/layers
  VALIDATION=on
else
  export WB_VK_NO_VALIDATION=1
  VALIDATION=off
fi
CLI=$B/bin/workbench-cli

# Driver: found by itself normally; else point the loader at NVIDIA's ICD.
if [ "$DRY" = 1 ]; then
  "$CLI" devices >"$LOGS/devices.txt" 2>&1
elif ! "$CLI" devices >"$LOGS/devices.txt" 2>&1 || ! grep -qi 'discrete\|integrated' "$LOGS/devices.txt"; then
  icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -f "$icd" ]; then
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    "$CLI" devices >"$LOGS/devices.txt" 2>&1
  fi
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$LOGS/devices.txt" 2>/dev/null
cat "$LOGS/devices.txt"
DEVICE=$(grep -m1 '^\*' "$LOGS/devices.txt" | sed 's/^\*[0-9]*: //')
say "device:     ${DEVICE:-none found} $(tail -1 "$LOGS/devices.txt" | grep -i nvidia)"
say "validation: $VALIDATION   dry run: $DRY   budget: ${BUDGET} s"

# ---- 1. correctness -------------------------------------------------------
run_test() {  # NAME MAX_S [ARGS...]: one Qt Test executable, its Totals line
  local name=$1 max=$2 t0=$SECONDS
  shift 2
  local lim
  lim=$(limit "$max")
  if [ "$lim" -le 0 ]; then say "$(printf '%-20s | %s' "$name" 'skipped: out of time')"; return; fi
  echo "===== $name $*" >>"$LOGS/tests.log"
  timeout "$lim" "$B/bin/$name" "$@" >"$WORK/test.txt" 2>&1
  local rc=$?
  cat "$WORK/test.txt" >>"$LOGS/tests.log"
  local totals
  totals=$(grep -E '^Totals:' "$WORK/test.txt" | sed 's/, [0-9]* blacklisted//')
  grep -E '^FAIL' "$WORK/test.txt" | head -5 | tee -a "$SUMMARY"
  [ "$rc" = 124 ] && totals="timed out after $lim s"
  say "$(printf '%-20s | rc=%-3s %-52s | %4d s' "$name" "$rc" "${totals:-no Totals line (crashed?)}" $((SECONDS - t0)))"
}
say ""
say "test                 | result                                                    | time"
if [ "$DRY" = 1 ]; then
  run_test test_vk_host 300 binding_access_from_spirv hazard_tracker_never_misses_a_dependency
  run_test test_vk_kernels 300 rms_norm add_rms_norm swiglu_and_add
else
  run_test test_vk_kernels 90
  run_test test_vk_model 90
  run_test test_vk_arch_golden 60
  run_test test_kquant_golden 45 "matches_dequantf32_runs:f16 vulkan" "matches_dequantf32_runs:q4_k_m vulkan"
  run_test test_vk_host 45
  run_test test_scheduler 45
fi

# ---- 2. figures -------------------------------------------------------------
# Synthetic models in real shapes: weights random, written by the project's
# own tool. One place to adapt when synth's options change.
synth_model() {  # SHAPE TYPE PATH
  if [ "$DRY" = 1 ]; then
    # Tiny stand-in: one TinyLlama layer, a small vocabulary.
    "$CLI" synth -q --shape tinyllama-1.1b --layers 1 --vocab 512 --type "$2" "$3"
  else
    "$CLI" synth -q --shape "$1" --type "$2" "$3"
  fi
}
export -f synth_model
export CLI B DRY
HAVE_SYNTH=1
if [ "$DRY" != 1 ] && ! "$CLI" synth --help >/dev/null 2>&1; then
  HAVE_SYNTH=0
  say "figures: this build has no 'workbench-cli synth'; real-shape figures skipped"
fi
if [ "$DRY" = 1 ]; then PP=16 TG=8 REPS=1; else PP=512 TG=128 REPS=2; fi
MODEL=$WORK/model.gguf

# bench_model SHAPE TYPE [extra figures...]: write, bench, optionally
# profile / cold start / concurrency, delete.
bench_model() {
  local shape=$1 type=$2
  shift 2
  local lim t0=$SECONDS
  [ "$HAVE_SYNTH" = 1 ] || return
  lim=$(limit 240)
  if [ "$lim" -le 30 ]; then say "$(printf '%-12s %-7s | skipped: out of time' "$shape" "$type")"; return; fi
  rm -f "$MODEL"
  echo "===== synth $shape $type" >>"$LOGS/synth.log"
  if ! timeout "$lim" bash -c 'synth_model "$@"' _ "$shape" "$type" "$MODEL" >>"$LOGS/synth.log" 2>&1; then
    say "$(printf '%-12s %-7s | synth failed or timed out (synth.log)' "$shape" "$type")"
    rm -f "$MODEL"
    return
  fi
  local t_synth=$((SECONDS - t0))
  lim=$(limit 150)
  echo "===== bench $shape $type -p $PP -n $TG -r $REPS" >>"$LOGS/bench.log"
  timeout "$lim" "$CLI" bench --backend vulkan -m "$MODEL" -p "$PP" -n "$TG" -r "$REPS" -c $((PP + TG)) --json \
    >"$WORK/bench.json" 2>>"$LOGS/bench.log"
  local rc=$?
  if [ "$rc" = 0 ]; then
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["shape"]=sys.argv[2]; j["type"]=sys.argv[3]; j["synth_s"]=int(sys.argv[4]); print(json.dumps(j))' \
      "$WORK/bench.json" "$shape" "$type" "$t_synth" >>"$LOGS/bench.jsonl"
  else
    say "$(printf '%-12s %-7s | bench rc=%s (bench.log)' "$shape" "$type" "$rc")"
  fi
  for extra in "$@"; do
    lim=$(limit 120)
    [ "$lim" -le 10 ] && { say "$shape $type $extra: skipped, out of time"; continue; }
    case $extra in
      profile)  # per-op GPU time of one decode step at depth PP, and host phases
        echo "===== profile $shape $type" >>"$LOGS/bench.log"
        timeout "$lim" "$CLI" bench --backend vulkan -m "$MODEL" -p "$PP" -n 16 -r 1 -c $((PP + 16)) --profile \
          >>"$LOGS/bench.log" 2>&1
        ;;
      cold)  # load (file pages dropped where allowed) to first token
        echo "===== cold start $shape $type" >>"$LOGS/bench.log"
        sync
        echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "(page cache not dropped)" >>"$LOGS/bench.log"
        local c0 ms
        c0=$(date +%s%N)
        timeout "$lim" "$CLI" generate --backend vulkan -m "$MODEL" -p "Once upon a time" -n 1 --temp 0 --no-log \
          >>"$LOGS/bench.log" 2>&1
        ms=$((($(date +%s%N) - c0) / 1000000))
        say "$(printf '%-12s %-7s | cold start to first token: %d ms (process start, load, prefill, 1 token)' \
          "$shape" "$type" "$ms")"
        ;;
      concurrency)
        echo "===== concurrency $shape $type" >>"$LOGS/bench.log"
        for n in 1 8 32; do
          lim=$(limit 90)
          [ "$lim" -le 10 ] && break
          timeout "$lim" "$CLI" bench --backend vulkan -m "$MODEL" --concurrency "$n" --requests $((2 * n)) -p 32 \
            -n "$([ "$DRY" = 1 ] && echo 8 || echo 32)" -c 128 --kv-type f16 >>"$LOGS/bench.log" 2>&1
        done
        ;;
    esac
  done
  rm -f "$MODEL"
}

say ""
if [ "$DRY" = 1 ]; then
  bench_model mistral-7b q4_0 profile cold
  bench_model mistral-7b f16 concurrency
  bench_model tinyllama-1.1b q8_0
else
  bench_model mistral-7b q4_0 profile cold
  bench_model mistral-7b f16
  bench_model mistral-7b q4_k_m concurrency
  bench_model tinyllama-1.1b q4_0
  bench_model mistral-7b q8_0
  bench_model tinyllama-1.1b f16
  bench_model tinyllama-1.1b q8_0
  bench_model tinyllama-1.1b q4_k_m
fi

# ---- 3. summary ---------------------------------------------------------------
say ""
python3 - "$LOGS/bench.jsonl" <<'EOF' | tee -a "$SUMMARY"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
BW = 4.8e12  # H200 HBM3e bytes/s (datasheet); the share is a lower bound on what decode reads
print(f"{'shape':<15} {'type':<7} {'GiB':>6} {'pp t/s':>9} {'tg t/s':>8} {'tg % of 4.8 TB/s':>17} {'synth s':>8}")
for r in rows:
    gib = r["weight_bytes"] / 2**30
    tg = r["tg"]["median"]
    bw = 100.0 * tg * r["weight_bytes"] / BW
    print(f"{r['shape']:<15} {r['type']:<7} {gib:6.2f} {r['pp']['median']:9.1f} {tg:8.1f} {bw:16.1f}% {r.get('synth_s', 0):8d}")
if rows:
    print(f"(pp{rows[0]['pp']['tokens']} / tg{rows[0]['tg']['tokens']}, median of {rows[0]['repetitions']} after one warm-up; device {rows[0]['device']})")
EOF
echo "decode step profile (largest ops, then host phases):" | tee -a "$SUMMARY"
awk '/one decode step/{on=1} on&&/^(mul_mat|attention|add_rms|rope|total|host ms)/' "$LOGS/bench.log" | head -8 | tee -a "$SUMMARY"
echo "concurrency (one run per level; speedup: compare the out tok/s rows):" | tee -a "$SUMMARY"
grep -m1 -E '^ conc ' "$LOGS/bench.log" | tee -a "$SUMMARY"
grep -E '^ +[0-9]+ ' "$LOGS/bench.log" | tee -a "$SUMMARY"
say "total: $((SECONDS - START)) s of a ${BUDGET} s budget"
