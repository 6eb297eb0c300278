// The k-quants: 256-value super-blocks of 16- or 32-value sub-blocks with
// packed scales (ggml-quants.c: dequantize_row_q{2..6}_K and
// quantize_row_q{2..6}_K_ref, which llama-quantize runs without an
// importance matrix). The search loops (make_qx_quants, make_q3_quants,
// make_qkx2_quants) follow ggml's float32 operation order exactly: every
// product and sum below is evaluated as ggml's C evaluates it, left to
// right, with ints converted to float where C converts them. Compiled with
// -ffp-contract=off (see quants.h).

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/quant_util.h"
#include "ggml/quants.h"

namespace wb::ggml {

using namespace detail;

namespace {

constexpr int QK_K = 256;
constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

// Block layouts (byte offsets of ggml-common.h's block_q*_K fields).
namespace q2k {
constexpr int scales = 0, qs = 16, d = 80, dmin = 82, size = 84;
}
namespace q3k {
constexpr int hmask = 0, qs = 32, scales = 96, d = 108, size = 110;
}
namespace q4k {
constexpr int d = 0, dmin = 2, scales = 4, qs = 16, size = 144;
}
namespace q5k {
constexpr int d = 0, dmin = 2, scales = 4, qh = 16, qs = 48, size = 176;
}
namespace q6k {
constexpr int ql = 0, qh = 128, scales = 192, d = 208, size = 210;
}

float f(int v) {
    return static_cast<float>(v);
}

// Scale and min of a signed-symmetric group: the scale that maximises the
// (weighted) fit of x by scale * l, l in [-nmax, nmax - 1], searched over
// 19 trial inverse scales (ggml make_qx_quants; rmse_type 1 weights x^2,
// which is what Q6_K uses). L gets l + nmax.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    auto weight = [&](int i) {
        return rmse_type == 1   ? x[i] * x[i]
               : rmse_type == 2 ? 1.0f
               : rmse_type == 3 ? std::fabs(x[i])
                                : std::sqrt(std::fabs(x[i]));
    };
    float iscale = f(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = weight(i);
        sumlx += w * x[i] * f(l);
        suml2 += w * f(l) * f(l);
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(f(nmax) + 0.1f * f(is)) / max;
        sumlx = suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            const float w = weight(i);
            sumlx += w * x[i] * f(l);
            suml2 += w * f(l) * f(l);
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Q3_K's group scale (ggml make_q3_quants with do_rmse): a first scale
// from the value of largest |x|, then up to 5 passes that move single
// values to a better level while the x^2-weighted fit improves.
// L gets l + nmax, l in [-nmax, nmax - 1].
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    const float iscale = f(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * f(l);
        suml2 += w * f(l) * f(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * f(L[i]);
            if (slx > 0.0f) {
                float sl2 = suml2 - w * f(L[i]) * f(L[i]);
                int new_l = nearest_int(x[i] * sl2 / slx);
                new_l = std::max(-nmax, std::min(nmax - 1, new_l));
                if (new_l != L[i]) {
                    slx += w * x[i] * f(new_l);
                    sl2 += w * f(new_l) * f(new_l);
                    if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (n_changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Scale and min of an asymmetric group (ggml make_qkx2_quants): x is fitted
// by scale * l - the_min, l in [0, nmax], minimising the weighted squared
// (or absolute, use_mad) error over nstep + 1 trial inverse scales
// (rmin + rdelta * is + nmax) / (max - min), each refined by weighted least
// squares for scale and min jointly.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    float iscale = f(nmax) / (max - min);
    float scale = 1.0f / iscale;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        float diff = scale * f(L[i]) + min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        const float w = weights[i];
        best_error += w * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * f(is) + f(nmax)) / (max - min);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            sum_l += w * f(l);
            sum_l2 += w * f(l) * f(l);
            sum_xl += w * f(l) * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0.0f;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * f(Laux[i]) + this_min - x[i];
                diff = use_mad ? std::fabs(diff) : diff * diff;
                const float w = weights[i];
                cur_error += w * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// 6-bit scale and min of sub-block j from Q4_K/Q5_K's 12 packed bytes
// (ggml get_scale_min_k4): j < 4 in the low 6 bits of bytes j and j + 4;
// j >= 4 split between a nibble of byte j + 4 and the top 2 bits of bytes
// j - 4 (scale) and j (min).
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Packs 8 6-bit scales and mins into Q4_K/Q5_K's 12 bytes (inverse of
// get_scale_min_k4).
void put_scales_k4(uint8_t* s, const uint8_t* ls, const uint8_t* lm) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            s[j] = ls[j];
            s[j + 4] = lm[j];
        } else {
            s[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            s[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
            s[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
        }
    }
}

// Signed 6-bit scale j (0..15) of Q3_K's 12 packed bytes, minus 32: low
// nibble in byte j (j < 8) or the high nibble of byte j - 8, top 2 bits in
// byte 8 + j % 4 at bit 2 * (j / 4).
int q3k_scale(const uint8_t* s, int j) {
    const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    return (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// Shared by Q4_K and Q5_K: sub-block scales/mins of one super-block by
// make_qkx2_quants, quantized to 6 bits against the largest of each, then
// every value re-quantized with the stored (f16-rounded) scales.
void quantize_k4_scales(const float* x, int nmax, float rmin, float rdelta, int nstep,
                        uint8_t* block, int off_d, int off_dmin, int off_scales, uint8_t* L) {
    uint8_t Laux[32];
    float weights[32], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < QK_K / 32; ++j) {
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32.0f);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                     rmin, rdelta, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < QK_K / 32; ++j) {
        // nearest_int into uint8_t wraps as C's conversion does
        ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
        lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
    }
    std::memset(block + off_scales, 0, 12);
    put_scales_k4(block + off_scales, ls, lm);
    store_f16(block + off_d, max_scale / 63.0f);
    store_f16(block + off_dmin, max_min / 63.0f);
    const float dd = load_f16(block + off_d), dmin = load_f16(block + off_dmin);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, block + off_scales, &sc, &m);
        const float d = dd * f(sc);
        if (d == 0.0f) continue;
        const float dm = dmin * f(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
}

// 2-bit values of 256 L's into Q2_K/Q3_K's 64 bytes: byte 32h + l holds
// values 128h + l + 32k in bits 2k.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                 (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        }
    }
}

}  // namespace

// --- Q2_K: 16 sub-blocks of 16 values, 4-bit scale and min each; x = d *
// (sc & 15) * q - dmin * (sc >> 4), q 2 bits ---

void dequantize_row_Q2_K(const void* src, float* y, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q2k::size) {
        const float d = load_f16(b + q2k::d), min = load_f16(b + q2k::dmin);
        const uint8_t* q = b + q2k::qs;
        int is = 0;
        for (int n128 = 0; n128 < QK_K; n128 += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const uint8_t sc = b[q2k::scales + is++];
                    const float dl = d * f(sc & 0xF), ml = min * f(sc >> 4);
                    for (int l = 0; l < 16; ++l)
                        *y++ = dl * f((q[l + 16 * half] >> shift) & 3) - ml;
                }
            }
            q += 32;
        }
    }
}

void quantize_row_Q2_K(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    constexpr float q4scale = 15.0f;
    for (int64_t i = 0; i < n / QK_K; ++i, b += q2k::size, x += QK_K) {
        uint8_t L[QK_K], Laux[16];
        float weights[16], mins[QK_K / 16], scales[QK_K / 16];
        float max_scale = 0.0f, max_min = 0.0f;
        for (int j = 0; j < QK_K / 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux,
                                         -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        uint8_t* sc = b + q2k::scales;
        if (max_scale > 0.0f) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j)
                sc[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
            store_f16(b + q2k::d, max_scale / q4scale);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) sc[j] = 0;
            store_f16(b + q2k::d, 0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j)
                sc[j] = static_cast<uint8_t>(sc[j] | (nearest_int(iscale * mins[j]) << 4));
            store_f16(b + q2k::dmin, max_min / q4scale);
        } else {
            store_f16(b + q2k::dmin, 0.0f);
        }
        const float dd = load_f16(b + q2k::d), dmin = load_f16(b + q2k::dmin);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dd * f(sc[j] & 0xF);
            if (d == 0.0f) continue;
            const float dm = dmin * f(sc[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int((x[16 * j + ii] + dm) / d);
                L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
            }
        }
        pack_2bit(L, b + q2k::qs);
    }
}

// --- Q3_K: 16 sub-blocks of 16 values, signed 6-bit scales; x = d *
// (scale - 32) * (q - 4), q 2 low bits + 1 bit in hmask ---

void dequantize_row_Q3_K(const void* src, float* y, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q3k::size) {
        const float d_all = load_f16(b + q3k::d);
        const uint8_t* q = b + q3k::qs;
        const uint8_t* hm = b + q3k::hmask;
        uint8_t m = 1;
        int is = 0;
        for (int n128 = 0; n128 < QK_K; n128 += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const float dl = d_all * f(q3k_scale(b + q3k::scales, is++));
                    for (int l = 16 * half; l < 16 * half + 16; ++l) {
                        const int v = ((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4);
                        *y++ = dl * f(v);
                    }
                }
                m = static_cast<uint8_t>(m << 1);
            }
            q += 32;
        }
    }
}

void quantize_row_Q3_K(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q3k::size, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0.0f, amax = 0.0f;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }
        uint8_t* sc = b + q3k::scales;
        std::memset(sc, 0, 12);
        if (max_scale != 0.0f) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                auto l = static_cast<int8_t>(nearest_int(iscale * scales[j]));  // wraps as C
                l = static_cast<int8_t>(std::max<int>(-32, std::min<int>(31, l)) + 32);
                if (j < 8) {
                    sc[j] = static_cast<uint8_t>(l & 0xF);
                } else {
                    sc[j - 8] = static_cast<uint8_t>(sc[j - 8] | ((l & 0xF) << 4));
                }
                l = static_cast<int8_t>(l >> 4);
                sc[j % 4 + 8] = static_cast<uint8_t>(sc[j % 4 + 8] | (l << (2 * (j / 4))));
            }
            store_f16(b + q3k::d, 1.0f / iscale);
        } else {
            store_f16(b + q3k::d, 0.0f);
        }
        const float dd = load_f16(b + q3k::d);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dd * f(q3k_scale(sc, j));
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int(x[16 * j + ii] / d);
                L[16 * j + ii] = static_cast<int8_t>(std::max(-4, std::min(3, l)) + 4);
            }
        }
        // The high bit of value j goes to hmask[j % 32], bit j / 32.
        uint8_t* hmask = b + q3k::hmask;
        std::memset(hmask, 0, QK_K / 8);
        uint8_t Lu[QK_K];
        for (int j = 0; j < QK_K; ++j) {
            int v = L[j];
            if (v > 3) {
                hmask[j % 32] = static_cast<uint8_t>(hmask[j % 32] | (1 << (j / 32)));
                v -= 4;
            }
            Lu[j] = static_cast<uint8_t>(v);
        }
        pack_2bit(Lu, b + q3k::qs);
    }
}

// --- Q4_K: 8 sub-blocks of 32 values, 6-bit scale and min each (packed in
// 12 bytes); x = d * sc * q - dmin * m, q 4 bits ---

void dequantize_row_Q4_K(const void* src, float* y, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q4k::size) {
        const float d = load_f16(b + q4k::d), min = load_f16(b + q4k::dmin);
        const uint8_t* q = b + q4k::qs;
        for (int is = 0; is < 8; is += 2, q += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is, b + q4k::scales, &sc, &m);
            const float d1 = d * f(sc), m1 = min * f(m);
            get_scale_min_k4(is + 1, b + q4k::scales, &sc, &m);
            const float d2 = d * f(sc), m2 = min * f(m);
            for (int l = 0; l < 32; ++l) *y++ = d1 * f(q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * f(q[l] >> 4) - m2;
        }
    }
}

void quantize_row_Q4_K(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q4k::size, x += QK_K) {
        uint8_t L[QK_K];
        quantize_k4_scales(x, 15, -1.0f, 0.1f, 20, b, q4k::d, q4k::dmin, q4k::scales, L);
        uint8_t* q = b + q4k::qs;
        for (int j = 0; j < QK_K; j += 64, q += 32)
            for (int l = 0; l < 32; ++l)
                q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
}

// --- Q5_K: as Q4_K with a fifth bit per value in qh; x = d * sc * q -
// dmin * m, q 5 bits ---

void dequantize_row_Q5_K(const void* src, float* y, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q5k::size) {
        const float d = load_f16(b + q5k::d), min = load_f16(b + q5k::dmin);
        const uint8_t* ql = b + q5k::qs;
        const uint8_t* qh = b + q5k::qh;
        unsigned u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            uint8_t sc, m;
            get_scale_min_k4(is, b + q5k::scales, &sc, &m);
            const float d1 = d * f(sc), m1 = min * f(m);
            get_scale_min_k4(is + 1, b + q5k::scales, &sc, &m);
            const float d2 = d * f(sc), m2 = min * f(m);
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * f((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * f((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
        }
    }
}

void quantize_row_Q5_K(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q5k::size, x += QK_K) {
        uint8_t L[QK_K];
        quantize_k4_scales(x, 31, -0.5f, 0.1f, 15, b, q5k::d, q5k::dmin, q5k::scales, L);
        uint8_t* qh = b + q5k::qh;
        uint8_t* ql = b + q5k::qs;
        std::memset(qh, 0, QK_K / 8);
        unsigned m1 = 1, m2 = 2;
        for (int n64 = 0; n64 < QK_K; n64 += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n64 + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] = static_cast<uint8_t>(qh[j] | m1);
                }
                int l2 = L[n64 + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] = static_cast<uint8_t>(qh[j] | m2);
                }
                ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
        }
    }
}

// --- Q6_K: 16 sub-blocks of 16 values, int8 scales; x = d * sc * (q - 32),
// q 4 low bits in ql + 2 high bits in qh ---

void dequantize_row_Q6_K(const void* src, float* y, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q6k::size) {
        const float d = load_f16(b + q6k::d);
        const uint8_t* ql = b + q6k::ql;
        const uint8_t* qh = b + q6k::qh;
        const auto* sc = reinterpret_cast<const int8_t*>(b + q6k::scales);
        for (int n128 = 0; n128 < QK_K; n128 += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = static_cast<int8_t>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 =
                    static_cast<int8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = static_cast<int8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 =
                    static_cast<int8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * f(sc[is]) * f(q1);
                y[l + 32] = d * f(sc[is + 2]) * f(q2);
                y[l + 64] = d * f(sc[is + 4]) * f(q3);
                y[l + 96] = d * f(sc[is + 6]) * f(q4);
            }
        }
    }
}

void quantize_row_Q6_K(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / QK_K; ++i, b += q6k::size, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0.0f, max_abs_scale = 0.0f;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(b, 0, q6k::size);
            store_f16(b + q6k::d, 0.0f);
            continue;
        }
        const float iscale = -128.0f / max_scale;
        store_f16(b + q6k::d, 1.0f / iscale);
        auto* sc = reinterpret_cast<int8_t*>(b + q6k::scales);
        for (int ib = 0; ib < QK_K / 16; ++ib)
            sc[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
        const float dd = load_f16(b + q6k::d);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dd * f(sc[j]);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int(x[16 * j + ii] / d);
                L[16 * j + ii] = static_cast<int8_t>(std::max(-32, std::min(31, l)) + 32);
            }
        }
        uint8_t* ql = b + q6k::ql;
        uint8_t* qh = b + q6k::qh;
        for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
                const int q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
                ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
                ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
                qh[l] =
                    static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                         ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
            }
        }
    }
}

}  // namespace wb::ggml
