#pragma once
// RoPE angles (RoFormer, Su et al. 2021, eq. 15, with ggml_rope_ext's
// linear scaling and frequency factors), computed on the host in double so
// that every backend rotates by the same numbers, large positions included.

#include <cstddef>
#include <cstdint>

#include "model/hparams.h"

namespace wb::model {

/// cs[t, i] = (cos theta, sin theta) with theta = pos[t] * rope.freq_scale *
/// rope.freq_base^(-2i / n_rot) / factor[i] for i < n_rot / 2 (factor =
/// hp.rope_freq_factors[i], 1 when empty). pos: [n_tok]; cs: [n_tok, n_rot/2, 2].
void rope_cos_sin(const HParams& hp, const RopeConfig& rope, const int32_t* pos, size_t n_tok,
                  float* cs);

}  // namespace wb::model
