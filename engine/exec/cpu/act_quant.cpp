#include "exec/cpu/act_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace wb::cpu {

namespace {

/// Scale and quantized values of one block of n floats (round to nearest
/// even, |q| <= 127). Returns the sum of the quants. A block holding NaN or
/// an infinity gets the scale NaN and zero quants, so every dot product
/// with it is NaN, as the f32 reference's is (std::max alone would skip a
/// NaN and quantize the rest as if it were not there).
int32_t quantize_block(const float* x, int n, float* d, int8_t* qs) {
    // One running max that keeps a NaN once it has seen one (no later
    // value compares greater than NaN): a select per value, no second
    // accumulator on this per-token path.
    float amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float a = std::fabs(x[i]);
        amax = (a > amax || std::isnan(a)) ? a : amax;
    }
    if (!(amax <= std::numeric_limits<float>::max())) {  // NaN or an infinity
        *d = std::numeric_limits<float>::quiet_NaN();
        std::memset(qs, 0, static_cast<size_t>(n));
        return 0;
    }
    *d = amax / 127.0f;
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < n; ++i) {
        const long v = std::lrintf(x[i] * id);
        qs[i] = static_cast<int8_t>(std::clamp(v, -127L, 127L));
        sum += qs[i];
    }
    return sum;
}

}  // namespace

int act_block_size(ActKind kind) noexcept {
    return kind == ActKind::Q8_0 ? 32 : kind == ActKind::Q8_K ? 256 : 1;
}

size_t act_row_bytes(ActKind kind, int64_t n) noexcept {
    size_t b = 0;
    switch (kind) {
        case ActKind::F32:
            b = static_cast<size_t>(n) * sizeof(float);
            break;
        case ActKind::Q8_0:
            b = static_cast<size_t>(n / 32) * sizeof(ActQ8_0);
            break;
        case ActKind::Q8_K:
            b = static_cast<size_t>(n / 256) * sizeof(ActQ8_K);
            break;
    }
    return (b + 7) / 8 * 8;
}

void quantize_act(ActKind kind, const float* x, void* dst, int64_t n) noexcept {
    switch (kind) {
        case ActKind::F32:
            std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
            return;
        case ActKind::Q8_0: {
            auto* b = static_cast<ActQ8_0*>(dst);
            for (int64_t i = 0; i < n / 32; ++i, ++b, x += 32)
                b->sum = quantize_block(x, 32, &b->d, b->qs);
            return;
        }
        case ActKind::Q8_K: {
            auto* b = static_cast<ActQ8_K*>(dst);
            for (int64_t i = 0; i < n / 256; ++i, ++b, x += 256) {
                quantize_block(x, 256, &b->d, b->qs);
                for (int j = 0; j < 16; ++j) {
                    int s = 0;
                    for (int l = 0; l < 16; ++l) s += b->qs[16 * j + l];
                    b->bsums[j] = static_cast<int16_t>(s);
                }
            }
            return;
        }
    }
}

}  // namespace wb::cpu
