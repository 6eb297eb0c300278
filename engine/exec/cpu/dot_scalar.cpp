// The portable kernels: the same integer sums per block as the SIMD ones,
// written as plain loops (the reference for reading the SIMD code, and the
// path for CPUs without AVX2).

#include <cstring>
#include <vector>

#include "exec/cpu/dot.h"
#include "exec/cpu/interleave.h"
#include "ggml/fp16.h"
#include "ggml/iq4nl.h"
#include "ggml/types.h"

namespace wb::cpu::detail {

namespace {

float f16_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return ggml::fp16_to_fp32(h);
}

float bf16_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return ggml::bf16_to_fp32(h);
}

const float* act_f32(const uint8_t* act, size_t stride, int t) {
    return reinterpret_cast<const float*>(act + static_cast<size_t>(t) * stride);
}

void dot_f32(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
             size_t os) {
    for (int t = 0; t < nt; ++t) {
        const float* x = act_f32(act, as, t);
        float acc[8] = {};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            float wv[8];
            std::memcpy(wv, w + 4 * i, sizeof wv);
            for (int l = 0; l < 8; ++l) acc[l] += wv[l] * x[i + l];
        }
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; i < n; ++i) {
            float wv;
            std::memcpy(&wv, w + 4 * i, 4);
            s += wv * x[i];
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

template <float (*kAt)(const uint8_t*)>
void dot_half(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const float* x = act_f32(act, as, t);
        float acc[8] = {};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int l = 0; l < 8; ++l) acc[l] += kAt(w + 2 * (i + l)) * x[i + l];
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; i < n; ++i) s += kAt(w + 2 * i) * x[i];
        out[static_cast<size_t>(t) * os] = s;
    }
}

void dot_f16(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
             size_t os) {
    dot_half<f16_at>(n, w, act, as, nt, out, os);
}

void dot_bf16(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    dot_half<bf16_at>(n, w, act, as, nt, out, os);
}

// Q8_0: block = f16 d, 32 int8. sum_b d_w d_a sum_i q_i a_i.
void dot_q8_0(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_0*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = w + 34 * b;
            const auto* q = reinterpret_cast<const int8_t*>(blk + 2);
            int32_t is = 0;
            for (int i = 0; i < 32; ++i) is += q[i] * a[b].qs[i];
            s += f16_at(blk) * a[b].d * static_cast<float>(is);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q4_0: block = f16 d, 16 bytes; byte j: element j (low nibble), j + 16
// (high nibble); x = d (q - 8). sum_i (q_i - 8) a_i = sum q a - 8 sum a.
void dot_q4_0(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_0*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = w + 18 * b;
            int32_t is = 0;
            for (int j = 0; j < 16; ++j) {
                is += (blk[2 + j] & 0xF) * a[b].qs[j];
                is += (blk[2 + j] >> 4) * a[b].qs[j + 16];
            }
            s += f16_at(blk) * a[b].d * static_cast<float>(is - 8 * a[b].sum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q4_1, Q5_0, Q5_1 (ggml's other 32-value blocks): f16 d, [f16 m], [32-bit
// qh], 16 bytes of nibbles as Q4_0's; q = nibble | (bit i of qh) << 4 for
// element i (Q5_*), x = d (q - kOff) (+ m). sum_i x_i a_i = d (sum q a -
// kOff sum a) + m sum a.
template <int kSize, bool kMin, bool kHigh, int kOff>
void dot_legacy(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
                size_t os) {
    constexpr int kQs = 2 + (kMin ? 2 : 0) + (kHigh ? 4 : 0);
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_0*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = w + kSize * b;
            uint32_t qh = 0;
            if (kHigh) std::memcpy(&qh, blk + (kMin ? 4 : 2), 4);
            int32_t is = 0;
            for (int j = 0; j < 16; ++j) {
                const int q0 = (blk[kQs + j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
                const int q1 = (blk[kQs + j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
                is += q0 * a[b].qs[j] + q1 * a[b].qs[j + 16];
            }
            s += f16_at(blk) * a[b].d * static_cast<float>(is - kOff * a[b].sum);
            if (kMin) s += f16_at(blk + 2) * a[b].d * static_cast<float>(a[b].sum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// IQ4_NL: f16 d, 16 bytes of nibbles as Q4_0's, each an index into the
// format's int8 table; x = d kIq4nlValues[q].
void dot_iq4_nl(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
                size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_0*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = w + 18 * b;
            int32_t is = 0;
            for (int j = 0; j < 16; ++j) {
                is += ggml::kIq4nlValues[blk[2 + j] & 0xF] * a[b].qs[j];
                is += ggml::kIq4nlValues[blk[2 + j] >> 4] * a[b].qs[j + 16];
            }
            s += f16_at(blk) * a[b].d * static_cast<float>(is);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q2_K and Q3_K share an element order: in 128-value half h, 2-bit field
// s of qs[32h + i] (i < 32) is element 128h + 32s + i, sub-block (16
// values, one scale) j = 8h + 2s + i / 16.
// Q2_K: 16 bytes of scale (low nibble) / min (high nibble), 64 bytes qs,
// f16 d, f16 dmin; x = d sc_j q - dmin m_j, q in 0..3.
void dot_q2_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = w + 84 * b;
            int32_t isum = 0, msum = 0;
            for (int j = 0; j < 16; ++j) {
                const int h = j / 8, sh = 2 * ((j % 8) / 2), i0 = 16 * (j % 2);
                int32_t part = 0;
                for (int l = 0; l < 16; ++l)
                    part += ((blk[16 + 32 * h + i0 + l] >> sh) & 3) * a[b].qs[16 * j + l];
                isum += (blk[j] & 0xF) * part;
                msum += (blk[j] >> 4) * a[b].bsums[j];
            }
            s += f16_at(blk + 80) * a[b].d * static_cast<float>(isum) -
                 f16_at(blk + 82) * a[b].d * static_cast<float>(msum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q3_K's signed 6-bit scale of sub-block j: its low 4 bits the low nibble of
// byte j (j < 8) or the high nibble of byte j - 8, its top 2 bits in byte
// 8 + j % 4 at bit 2 (j / 4); stored + 32.
int q3_k_scale(const uint8_t* s, int j) {
    const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    return (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// Q3_K: 32 bytes hmask, 64 bytes qs (low 2 bits), 12 bytes scales, f16 d;
// element 128h + 32s + i has its third bit in bit 4h + s of hmask[i];
// x = d sc_j (q - 4), q = low | third << 2 in 0..7.
void dot_q3_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = w + 110 * b;
            int32_t isum = 0;
            for (int j = 0; j < 16; ++j) {
                const int h = j / 8, sf = (j % 8) / 2, i0 = 16 * (j % 2);
                int32_t part = 0;
                for (int l = 0; l < 16; ++l) {
                    const int lo = (blk[32 + 32 * h + i0 + l] >> (2 * sf)) & 3;
                    const int hi = (blk[i0 + l] >> (4 * h + sf)) & 1;
                    part += (lo | (hi << 2)) * a[b].qs[16 * j + l];
                }
                isum += q3_k_scale(blk + 96, j) * (part - 4 * a[b].bsums[j]);
            }
            s += f16_at(blk + 108) * a[b].d * static_cast<float>(isum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q4_K: super-block = f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128
// bytes of nibbles (32-byte group g: sub-block 2g low, 2g + 1 high);
// x = d sc_j q - dmin m_j.
void scales_q4_k(const uint8_t* s, int* sc, int* m) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            sc[j] = s[j] & 63;
            m[j] = s[j + 4] & 63;
        } else {
            sc[j] = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
            m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
    }
}

void dot_q4_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = w + 144 * b;
            int sc[8], m[8];
            scales_q4_k(blk + 4, sc, m);
            const uint8_t* q = blk + 16;
            int32_t isum = 0, msum = 0;
            for (int g = 0; g < 4; ++g) {
                int32_t lo = 0, hi = 0;
                for (int l = 0; l < 32; ++l) {
                    lo += (q[32 * g + l] & 0xF) * a[b].qs[64 * g + l];
                    hi += (q[32 * g + l] >> 4) * a[b].qs[64 * g + 32 + l];
                }
                isum += sc[2 * g] * lo + sc[2 * g + 1] * hi;
            }
            for (int j = 0; j < 8; ++j) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
            s += f16_at(blk) * a[b].d * static_cast<float>(isum) -
                 f16_at(blk + 2) * a[b].d * static_cast<float>(msum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q5_K: as Q4_K (same 12 bytes of scales/mins) with a fifth bit per value:
// f16 d, f16 dmin, 12 bytes scales, 32 bytes qh, 128 bytes nibbles. Group
// g's low nibbles (sub-block 2g) take bit 2g of qh[l], its high nibbles
// (sub-block 2g + 1) bit 2g + 1; x = d sc_j q - dmin m_j, q in 0..31.
void dot_q5_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = w + 176 * b;
            int sc[8], m[8];
            scales_q4_k(blk + 4, sc, m);
            const uint8_t* qh = blk + 16;
            const uint8_t* q = blk + 48;
            int32_t isum = 0, msum = 0;
            for (int g = 0; g < 4; ++g) {
                int32_t lo = 0, hi = 0;
                for (int l = 0; l < 32; ++l) {
                    const int ql = (q[32 * g + l] & 0xF) | (((qh[l] >> (2 * g)) & 1) << 4);
                    const int qu = (q[32 * g + l] >> 4) | (((qh[l] >> (2 * g + 1)) & 1) << 4);
                    lo += ql * a[b].qs[64 * g + l];
                    hi += qu * a[b].qs[64 * g + 32 + l];
                }
                isum += sc[2 * g] * lo + sc[2 * g + 1] * hi;
            }
            for (int j = 0; j < 8; ++j) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
            s += f16_at(blk) * a[b].d * static_cast<float>(isum) -
                 f16_at(blk + 2) * a[b].d * static_cast<float>(msum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// Q6_K: super-block = 128 bytes ql (low 4 bits), 64 bytes qh (high 2
// bits), 16 int8 scales, f16 d; x = d sc_g (q - 32), 16 values per scale.
void dot_q6_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s = 0.0f;
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = w + 210 * b;
            const auto* sc = reinterpret_cast<const int8_t*>(blk + 192);
            int32_t isum = 0;
            for (int h = 0; h < 2; ++h) {
                const uint8_t* ql = blk + 64 * h;
                const uint8_t* qh = blk + 128 + 32 * h;
                const int8_t* y = a[b].qs + 128 * h;
                int32_t part[8] = {};  // per 16-value group of this half
                for (int l = 0; l < 32; ++l) {
                    const int q1 = (ql[l] & 0xF) | ((qh[l] & 3) << 4);
                    const int q2 = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
                    const int q3 = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                    const int q4 = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
                    part[l / 16] += q1 * y[l];
                    part[2 + l / 16] += q2 * y[l + 32];
                    part[4 + l / 16] += q3 * y[l + 64];
                    part[6 + l / 16] += q4 * y[l + 96];
                }
                for (int g = 0; g < 8; ++g)
                    isum += sc[8 * h + g] * (part[g] - 32 * a[b].bsums[8 * h + g]);
            }
            s += f16_at(blk + 208) * a[b].d * static_cast<float>(isum);
        }
        out[static_cast<size_t>(t) * os] = s;
    }
}

// The legacy types the one template covers (block bytes, min, 5th bit, offset).
void dot_q4_1(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    dot_legacy<20, true, false, 0>(n, w, act, as, nt, out, os);
}
void dot_q5_0(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    dot_legacy<22, false, true, 16>(n, w, act, as, nt, out, os);
}
void dot_q5_1(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    dot_legacy<24, true, true, 0>(n, w, act, as, nt, out, os);
}

// The interleaved groups (cpu/interleave.h): per block, the 8 rows' scales,
// then 32-byte slices with 4 bytes of each row. kFlip undoes Q8_0's stored
// q + 128; Q4_0's nibbles give values 4L + j (low) and 16 + 4L + j (high).
template <bool kNibbles>
void dot_x8(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
            size_t os) {
    constexpr int kSlices = kNibbles ? 4 : 8;
    constexpr size_t kGroupBlock = 16 + 32 * kSlices;
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_0*>(act + static_cast<size_t>(t) * as);
        float s[8] = {};
        for (int64_t b = 0; b < n / 32; ++b) {
            const uint8_t* blk = g + kGroupBlock * static_cast<size_t>(b);
            for (int r = 0; r < 8; ++r) {
                int32_t is = 0;
                for (int l = 0; l < kSlices; ++l) {
                    for (int j = 0; j < 4; ++j) {
                        const uint8_t v = blk[16 + 32 * l + 4 * r + j];
                        if (kNibbles) {
                            is += ((v & 0xF) - 8) * a[b].qs[4 * l + j];
                            is += ((v >> 4) - 8) * a[b].qs[16 + 4 * l + j];
                        } else {
                            is += static_cast<int8_t>(v ^ 0x80) * a[b].qs[4 * l + j];
                        }
                    }
                }
                s[r] += f16_at(blk + 2 * r) * a[b].d * static_cast<float>(is);
            }
        }
        for (int r = 0; r < 8; ++r) out[static_cast<size_t>(t) * os + r] = s[r];
    }
}

// F16 groups: value j of the 8 rows at 16j (cpu/interleave.h); per token
// the 8 row sums in the order dot_f16 takes (8 partial sums of every 8th
// value, then pairwise).
template <float (*kAt)(const uint8_t*)>
void dot_x8_half(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    for (int t = 0; t < nt; ++t) {
        const float* x = act_f32(act, as, t);
        for (int r = 0; r < 8; ++r) {
            float acc[8] = {};
            for (int64_t i = 0; i < n; i += 8)
                for (int l = 0; l < 8; ++l) acc[l] += kAt(g + 16 * (i + l) + 2 * r) * x[i + l];
            out[static_cast<size_t>(t) * os + r] =
                ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
    }
}

void dot_x8_f16(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                size_t os) {
    dot_x8_half<f16_at>(n, g, act, as, nt, out, os);
}

// BF16 groups: F16's layout and sum order.
void dot_x8_bf16(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    dot_x8_half<bf16_at>(n, g, act, as, nt, out, os);
}

void dot_x8_q4_0(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    dot_x8<true>(n, g, act, as, nt, out, os);
}
void dot_x8_q8_0(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    dot_x8<false>(n, g, act, as, nt, out, os);
}

// Q4_K's group-block: d[8], dmin[8], scale byte k of row r at 32 + 8k + r,
// then slice 8g + L at 128 + 32 (8g + L) with row r's 4 bytes at 4r.
void dot_x8_q4_k(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    for (int t = 0; t < nt; ++t) {
        const auto* a = reinterpret_cast<const ActQ8_K*>(act + static_cast<size_t>(t) * as);
        float s[8] = {};
        for (int64_t b = 0; b < n / 256; ++b) {
            const uint8_t* blk = g + 1152 * static_cast<size_t>(b);
            for (int r = 0; r < 8; ++r) {
                uint8_t packed[12];
                for (int k = 0; k < 12; ++k) packed[k] = blk[32 + 8 * k + r];
                int sc[8], m[8];
                scales_q4_k(packed, sc, m);
                int32_t isum = 0, msum = 0;
                for (int gi = 0; gi < 4; ++gi) {
                    int32_t lo = 0, hi = 0;
                    for (int l = 0; l < 8; ++l) {
                        for (int j = 0; j < 4; ++j) {
                            const uint8_t v = blk[128 + 32 * (8 * gi + l) + 4 * r + j];
                            lo += (v & 0xF) * a[b].qs[64 * gi + 4 * l + j];
                            hi += (v >> 4) * a[b].qs[64 * gi + 32 + 4 * l + j];
                        }
                    }
                    isum += sc[2 * gi] * lo + sc[2 * gi + 1] * hi;
                }
                for (int j = 0; j < 8; ++j)
                    msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
                s[r] += f16_at(blk + 2 * r) * a[b].d * static_cast<float>(isum) -
                        f16_at(blk + 16 + 2 * r) * a[b].d * static_cast<float>(msum);
            }
        }
        for (int r = 0; r < 8; ++r) out[static_cast<size_t>(t) * os + r] = s[r];
    }
}

// Q6_K groups: each row taken back to ggml's layout (cpu/interleave.h),
// then dot_q6_k's sums.
void dot_x8_q6_k(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    const size_t rb = static_cast<size_t>(n / 256) * 210;
    thread_local std::vector<uint8_t> row;  // one row in ggml's layout, reused by the thread
    row.resize(rb);
    for (int r = 0; r < 8; ++r) {
        deinterleave_row(static_cast<uint32_t>(ggml::Type::Q6_K), g, rb, r, row.data());
        dot_q6_k(n, row.data(), act, as, nt, out + r, os);
    }
}

}  // namespace

#define WB_KERNEL_LOOKUP scalar_kernel
#include "exec/cpu/kernel_lookup.inc"
#undef WB_KERNEL_LOOKUP

}  // namespace wb::cpu::detail
