#!/bin/bash
# GPU check, one call on a machine with a real GPU (e.g. an NVIDIA H200
# with no Qt and no Vulkan SDK installed). Unpacks the bundle made by
# tests/gpu/prepare.sh, finds a Vulkan loader and driver, then runs the
# shader tests, the golden forward-pass tests and the scheduler's batch
# invariance tests (validation layer on when carried), `workbench-cli
# bench` with the per-op profile and `bench --concurrency 1,4,8,16,32`
# (issue: serving throughput), and prints a short table last. Logs go to $OUT when the caller sets it, else
# /tmp/wb-gpu-out.
# Usage (repo root): bash tests/gpu/run.sh [build/gpu-bundle.tar.xz]
set -u
BUNDLE=${1:-build/gpu-bundle.tar.xz}
LOGS=${OUT:-/tmp/wb-gpu-out}
WORK=/tmp/wb-gpu
mkdir -p "$LOGS"
rm -rf "$WORK" && mkdir -p "$WORK"
if [ ! -f "$BUNDLE" ]; then echo "run.sh: no bundle $BUNDLE (run tests/gpu/prepare.sh here first)"; exit 1; fi
tar -xJf "$BUNDLE" -C "$WORK" || exit 1
B=$WORK/gpu-bundle

# Vulkan loader: the device README's carried debs first, else the bundled one.
if [ -d .gl ] && [ "$(id -u)" = 0 ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  echo "run.sh: no system Vulkan loader; using the bundled libvulkan.so.1"
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/vulkan
fi
export WB_TEST_DATA_DIR=$B/data
export XDG_CACHE_HOME=/tmp/wb-gpu-cache
if [ -f "$B/layers/VkLayer_khronos_validation.json" ]; then
  export VK_LAYER_PATH=$B/layers
  VALIDATION=on
else
  export WB_VK_NO_VALIDATION=1
  VALIDATION=off
fi
CLI=$B/bin/workbench-cli
MODEL=$B/data/models/stories260K.gguf

# Driver: found by itself normally; else point the loader at NVIDIA's ICD.
if ! "$CLI" devices >"$LOGS/devices.txt" 2>&1 || ! grep -qi 'discrete\|integrated' "$LOGS/devices.txt"; then
  icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -f "$icd" ]; then
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    "$CLI" devices >"$LOGS/devices.txt" 2>&1
  fi
fi
cat "$LOGS/devices.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tee "$LOGS/nvidia-smi.txt"

run_test() {  # name -> "passed/failed" summary from Qt Test's Totals line
  local name=$1 start=$SECONDS
  "$B/bin/$name" >"$LOGS/$name.txt" 2>&1
  local rc=$?
  local totals
  totals=$(grep -E '^Totals:' "$LOGS/$name.txt" | sed 's/, [0-9]* blacklisted//')
  grep -E '^(FAIL|QWARN|QINFO)' "$LOGS/$name.txt" | head -20
  echo "$name|rc=$rc ${totals:-no Totals line (crashed?)}|$((SECONDS - start)) s" >>"$WORK/table"
}
: >"$WORK/table"
run_test test_vk_kernels
run_test test_vk_llama
run_test test_vk_arch_golden
run_test test_scheduler

"$CLI" bench -m "$MODEL" -p 64 -n 64 -r 5 --profile >"$LOGS/bench_p64_n64.txt" 2>&1
echo "bench rc=$?" >>"$LOGS/bench_p64_n64.txt"
"$CLI" bench -m "$MODEL" -p 512 -n 128 -r 3 --kv-type f16 >"$LOGS/bench_p512_n128_f16kv.txt" 2>&1
"$CLI" bench -m "$MODEL" --concurrency 1,4,8,16,32 >"$LOGS/bench_concurrency.txt" 2>&1
echo "bench rc=$?" >>"$LOGS/bench_concurrency.txt"
cat "$LOGS/bench_p64_n64.txt" "$LOGS/bench_p512_n128_f16kv.txt" "$LOGS/bench_concurrency.txt"
echo "story:" && "$CLI" generate -m "$MODEL" -p "Once upon a time" -n 48 --temp 0 2>"$LOGS/generate_stderr.txt" | tee "$LOGS/generate.txt"
tail -3 "$LOGS/generate_stderr.txt"

echo
echo "==================== GPU check summary ===================="
echo "device:     $(grep -m1 '^\*' "$LOGS/devices.txt" | sed 's/^\*[0-9]*: //')"
echo "validation: $VALIDATION"
printf '%-16s | %-60s | %s\n' test result time
while IFS='|' read -r n r t; do printf '%-16s | %-60s | %s\n' "$n" "$r" "$t"; done <"$WORK/table"
for f in bench_p64_n64 bench_p512_n128_f16kv; do
  grep -E '^\| (pp|tg)' "$LOGS/$f.txt" | sed "s/^/$f /"
done
echo "decode step, bench -p 64 -n 64 --profile (largest ops, then host phases):"
awk '/one decode step/{on=1} on&&/^(mul_mat|attention|add_rms|total|host ms)/' "$LOGS/bench_p64_n64.txt" | head -8
echo "concurrency (bench --concurrency):"
grep -E '^ +(conc|[0-9]+) ' "$LOGS/bench_concurrency.txt"
