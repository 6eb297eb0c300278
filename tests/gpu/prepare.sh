#!/bin/bash
# Packs what the GPU check (tests/gpu/run.sh) needs into one git-ignored
# archive, build/gpu-bundle.tar.xz, because the GPU machine has no Qt, no
# Vulkan SDK and builds nothing:
#   bin/     test_vk_kernels, test_vk_model, test_vk_arch_golden, test_vk_host, test_scheduler,
#            workbench-cli
#            (stripped copies)
#   lib/     the ldd-resolved libraries they need that a bare machine may
#            lack (Qt6Core/Qt6Test, ICU, pcre2, ...); never glibc/libstdc++
#   vulkan/  libvulkan.so.1 (used only when the machine has no loader)
#   layers/  VK_LAYER_KHRONOS_validation (.so + manifest) so the tests keep
#            the validation layer on there too
#   data/    models/stories260K.gguf, golden/ and the golden2/ files the bundled tests read
#            (each tiny model's F16 file and goldens, llama-spm's Q4_K_M file), from tests/data
# Usage: tests/gpu/prepare.sh [BUILD_DIR]   (default: build/release)
# Build first, e.g.:
#   cmake --preset release && cmake --build build/release --target test_vk_kernels test_vk_model test_vk_host test_kquant_golden test_vk_arch_golden test_scheduler workbench-cli
# Then copy build/gpu-bundle.tar.xz to the GPU machine and run, from a checkout there:
#   bash tests/gpu/run.sh build/gpu-bundle.tar.xz
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build/release}
DATA=${WB_TEST_DATA_DIR:-$ROOT/tests/data}
STAGE=$ROOT/build/gpu-bundle
OUT_TAR=$ROOT/build/gpu-bundle.tar.xz

bins=("$BUILD/tests/exec/vk/test_vk_kernels" "$BUILD/tests/exec/vk/test_vk_model" "$BUILD/tests/exec/vk/test_vk_host"
  "$BUILD/tests/exec/vk/test_kquant_golden"
  "$BUILD/tests/model/test_vk_arch_golden" "$BUILD/tests/scheduler/test_scheduler"
  "$BUILD/app/cli/workbench-cli")
for b in "${bins[@]}"; do
  if [ ! -x "$b" ]; then
    echo "prepare.sh: missing $b; build it first:" >&2
    echo "  cmake --build $BUILD --target test_vk_kernels test_vk_model test_vk_host test_kquant_golden test_vk_arch_golden test_scheduler workbench-cli" >&2
    exit 1
  fi
done

rm -rf "$STAGE" "$OUT_TAR"
mkdir -p "$STAGE"/{bin,lib,vulkan,layers,data/models,data/golden}
for b in "${bins[@]}"; do
  cp "$b" "$STAGE/bin/"
  strip --strip-debug "$STAGE/bin/$(basename "$b")"
done

# Libraries: everything ldd resolves except the C/C++ runtime (the GPU
# machine's newer glibc and libstdc++ are backward compatible) and the
# Vulkan loader (kept apart: the machine's own loader wins when present).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so)'
for b in "${bins[@]}"; do
  ldd "$b" | awk '/=> \// {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $skip ]]; then continue; fi
    if [[ "$name" == libvulkan.so* ]]; then cp -L "$path" "$STAGE/vulkan/$name"; continue; fi
    cp -L "$path" "$STAGE/lib/$name"
  done
done

layer_so=/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so
layer_json=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [ -f "$layer_so" ] && [ -f "$layer_json" ]; then
  cp "$layer_so" "$STAGE/layers/"
  # library_path relative to the manifest, so VK_LAYER_PATH=<bundle>/layers works anywhere
  sed 's|"library_path": *"[^"]*"|"library_path": "./libVkLayer_khronos_validation.so"|' "$layer_json" \
    >"$STAGE/layers/VkLayer_khronos_validation.json"
else
  echo "prepare.sh: no validation layer here (apt-get install vulkan-validationlayers); the GPU tests will run without it" >&2
fi

cp "$DATA/models/stories260K.gguf" "$STAGE/data/models/"
cp "$DATA"/golden/stories260K_* "$STAGE/data/golden/"
# golden2 without what the bundled tests do not read (tokenizer goldens,
# quantization tables, K-quant files other than Q4_K_M): the bundle and the
# checkout sent with it must stay under the GPU machine's 64 MiB.
cp -r "$DATA/golden2" "$STAGE/data/"
rm -rf "$STAGE/data/golden2/tokenizer" "$STAGE/data/golden2/quant_blocks.json"
rm -f "$STAGE"/data/golden2/*/quant_files.json
find "$STAGE/data/golden2" -name '*-q*.gguf' ! -name '*-q4_k_m.gguf' -delete

tar -C "$ROOT/build" -cJf "$OUT_TAR" gpu-bundle
echo "prepare.sh: wrote $OUT_TAR ($(du -h "$OUT_TAR" | cut -f1))"
