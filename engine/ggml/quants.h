#pragma once
// CPU dequantizers (the reference every shader is checked against) and
// ggml's reference quantizers, one pair per computable row of
// ggml/types.def, named dequantize_row_<NAME> / quantize_row_<NAME>.
//
// Both reproduce ggml bit for bit (ggml-quants.c: dequantize_row_<type>
// and quantize_row_<type>_ref, or quantize_<type> without an importance
// matrix where llama-quantize calls that): the same float32 operations in
// the same order, nearest_int's magic-number rounding, round-to-nearest-even
// fp16 conversion. The files are compiled with -ffp-contract=off so that no
// multiply-add is fused (libggml-base is built without FMA contraction).
//
// n: values, a multiple of the type's block size (checked by the callers in
// types.cpp); src/dst need no alignment.

#include <cstdint>

namespace wb::ggml {

#define WB_TYPE(id, NAME, name, block, size, backends)                  \
    void dequantize_row_##NAME(const void* src, float* dst, int64_t n); \
    void quantize_row_##NAME(const float* src, void* dst, int64_t n);
#define WB_TYPE_KNOWN(id, NAME, name, block, size)
#include "ggml/types.def"
#undef WB_TYPE
#undef WB_TYPE_KNOWN

}  // namespace wb::ggml
