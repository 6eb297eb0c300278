#include "model/weight_traffic.h"

namespace wb::model {

uint64_t decode_weight_bytes(const ModelDesc& d) noexcept {
    uint64_t bytes = 0;
    for (size_t m = 0; m < d.mats.size(); ++m) {
        const bool embd = static_cast<MatId>(m) == d.token_embd;
        const bool out = static_cast<MatId>(m) == d.output;
        for (const uint32_t t : d.mats[m].parts) {
            const TensorRef& ref = d.tensors[t];
            if (out) {
                bytes += ref.nbytes;  // read whole as the output projection
            } else if (embd) {
                bytes += ref.ne1 > 0 ? ref.nbytes / ref.ne1 : 0;  // the token's row
            } else {
                bytes += ref.nbytes;
            }
        }
    }
    for (const VecDesc& v : d.vecs)
        for (const uint32_t t : v.parts) bytes += d.tensors[t].nbytes;
    return bytes;
}

}  // namespace wb::model
