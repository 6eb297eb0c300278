#include "model/prefill.h"

#include <algorithm>
#include <stdexcept>

#include "kv/batch.h"

namespace wb::model {

void prefill(Model& m, std::span<const int32_t> tokens, int32_t seq, int32_t pos0,
             uint32_t n_ubatch, std::vector<float>& logits) {
    if (n_ubatch == 0) throw std::invalid_argument("prefill: n_ubatch must be >= 1");
    Batch batch;
    for (size_t start = 0; start < tokens.size(); start += n_ubatch) {
        const size_t end = std::min(tokens.size(), start + n_ubatch);
        batch.clear();
        for (size_t i = start; i < end; ++i)
            batch.add(tokens[i], pos0 + static_cast<int32_t>(i), seq, i + 1 == tokens.size());
        m.decode(batch, logits);
    }
}

}  // namespace wb::model
