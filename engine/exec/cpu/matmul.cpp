#include "exec/cpu/matmul.h"

#include <algorithm>

#include "exec/cpu/act_quant.h"
#include "exec/cpu/dot.h"
#include "ggml/types.h"

namespace wb::cpu {

namespace {

/// A task: rows [r0, r1) of part p, global output row offset base.
struct Chunk {
    uint32_t part;
    uint64_t r0, r1, base;
};

}  // namespace

void matmul(ThreadPool& pool, Isa isa, const Weight& w, const float* x, size_t ldx, size_t n_tok,
            float* y, size_t ldy, MatmulScratch& s, bool int8_acts) {
    if (n_tok == 0 || w.rows == 0) return;
    const int64_t n = static_cast<int64_t>(w.ne0);
    const WeightKernel* f32 = weight_kernel(0, isa);

    // The activation forms the parts need, each quantized once.
    bool need[3] = {};
    std::vector<const WeightKernel*> kernels;
    for (const WeightPart& p : w.parts) {
        const WeightKernel* k = weight_kernel(p.type, isa);
        if (k != nullptr && k->act != ActKind::F32 && !int8_acts) k = nullptr;
        if (k != nullptr && p.layout == Layout::Interleaved8 && k->dot_x8 == nullptr) k = nullptr;
        kernels.push_back(k);
        need[static_cast<int>(k ? k->act : ActKind::F32)] = true;
    }
    size_t stride[3] = {};
    for (int k = 0; k < 3; ++k) {
        if (!need[k]) continue;
        const ActKind kind = static_cast<ActKind>(k);
        stride[k] = act_row_bytes(kind, n);
        s.act[k].resize((stride[k] * n_tok + 7) / 8);
        auto* base = reinterpret_cast<uint8_t*>(s.act[k].data());
        const auto quant = [&](uint32_t t, unsigned) {
            quantize_act(kind, x + t * ldx, base + t * stride[k], n, isa);
        };
        if (n_tok >= 4) {
            pool.run(static_cast<uint32_t>(n_tok), quant);
        } else {
            for (uint32_t t = 0; t < n_tok; ++t) quant(t, 0);
        }
    }

    // Chunks of rows: several per thread so that a thread slowed by other
    // load takes fewer; at least 16 rows so a chunk's work dwarfs its
    // scheduling cost.
    // A multiple of 8 so that chunks start and end on interleaved groups.
    const uint64_t target =
        (std::max<uint64_t>(16, w.rows / (uint64_t{pool.size()} * 8)) + 7) / 8 * 8;
    std::vector<Chunk> chunks;
    uint64_t base = 0;
    for (uint32_t p = 0; p < w.parts.size(); ++p) {
        for (uint64_t r = 0; r < w.parts[p].rows; r += target)
            chunks.push_back({p, r, std::min(w.parts[p].rows, r + target), base});
        base += w.parts[p].rows;
    }
    if (s.rows.size() < pool.size()) s.rows.resize(pool.size());

    pool.run(static_cast<uint32_t>(chunks.size()), [&](uint32_t c, unsigned thread) {
        const Chunk& ch = chunks[c];
        const WeightPart& part = w.parts[ch.part];
        const WeightKernel* k = kernels[ch.part];
        if (k != nullptr) {
            const int a = static_cast<int>(k->act);
            const auto* act = reinterpret_cast<const uint8_t*>(s.act[a].data());
            const bool x8 = part.layout == Layout::Interleaved8;
            // Four or two groups a call where the ISA has such kernels
            // (dot.h), the chunk's remaining rows with the narrower ones.
            const bool wide = x8 && k->dot_x16 != nullptr;
            const bool wide32 = wide && k->dot_x32 != nullptr;
            const size_t tile = wide32 ? kMaxTile32 : wide ? kMaxTile16 : kMaxTile;
            const uint64_t step = x8 ? kGroupRows : 1;
            for (size_t t0 = 0; t0 < n_tok; t0 += tile) {
                const size_t nt = std::min(tile, n_tok - t0);
                const uint8_t* at = act + t0 * stride[a];
                for (uint64_t r = ch.r0; r < ch.r1; r += step) {
                    const uint8_t* wr = part.data + r * part.row_bytes;
                    float* yr = y + t0 * ldy + ch.base + r;
                    if (wide32 && r + 4 * kGroupRows <= ch.r1) {
                        k->dot_x32(n, wr, at, stride[a], static_cast<int>(nt), yr, ldy);
                        r += 3 * kGroupRows;
                        continue;
                    }
                    if (wide && r + 2 * kGroupRows <= ch.r1) {
                        k->dot_x16(n, wr, at, stride[a], static_cast<int>(nt), yr, ldy);
                        r += kGroupRows;
                        continue;
                    }
                    for (size_t s0 = 0; s0 < nt; s0 += kMaxTile)
                        (x8 ? k->dot_x8 : k->dot)(
                            n, wr, at + s0 * stride[a], stride[a],
                            static_cast<int>(std::min<size_t>(kMaxTile, nt - s0)), yr + s0 * ldy,
                            ldy);
                }
            }
            return;
        }
        // Fallback: dequantize each row once, then f32 dots for every token.
        std::vector<float>& row = s.rows[thread];
        row.resize(static_cast<size_t>(n));
        std::vector<uint8_t> bytes;  // one row in ggml's layout, for an interleaved part
        if (part.layout == Layout::Interleaved8) bytes.resize(part.row_bytes);
        const auto* act = reinterpret_cast<const uint8_t*>(s.act[0].data());
        for (uint64_t r = ch.r0; r < ch.r1; ++r) {
            const uint8_t* src = part.data + r * part.row_bytes;
            if (part.layout == Layout::Interleaved8) {
                deinterleave_row(part.type,
                                 part.data + r / kGroupRows * kGroupRows * part.row_bytes,
                                 part.row_bytes, static_cast<int>(r % kGroupRows), bytes.data());
                src = bytes.data();
            }
            ggml::dequantize_row(part.type, src, row.data(), static_cast<uint64_t>(n));
            const auto* wr = reinterpret_cast<const uint8_t*>(row.data());
            for (size_t t0 = 0; t0 < n_tok; t0 += kMaxTile) {
                const int nt = static_cast<int>(std::min<size_t>(kMaxTile, n_tok - t0));
                f32->dot(n, wr, act + t0 * stride[0], stride[0], nt, y + t0 * ldy + ch.base + r,
                         ldy);
            }
        }
    });
}

}  // namespace wb::cpu
