#pragma once
// How many bytes of weights one decode step reads per token: the figure
// that, times tokens/s, gives decode's effective weight bandwidth (GB/s),
// comparable with the machine's read bandwidth (cpu/bandwidth.h). A decode
// step of one token multiplies the token's activations with every weight
// matrix once and reads every norm and bias vector once; of the
// token-embedding table it reads one row (the token's), unless the output
// projection is tied to it, when the whole table is read as that matrix.
// KV-cache reads are not weights and are not counted.

#include <cstdint>

#include "model/model_desc.h"

namespace wb::model {

/// Weight bytes one decode step of one token reads, from the model's
/// weight table: the bytes in the file of every matrix but the token
/// embedding (all parts; the output matrix once, even when it is the
/// tied embedding) + every vector + one row of the token embedding
/// (its nbytes / rows; 0 more when tied, as the output already counts the
/// table). Never throws.
uint64_t decode_weight_bytes(const ModelDesc& d) noexcept;

}  // namespace wb::model
