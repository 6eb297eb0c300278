#include "core/context_size.h"

#include <algorithm>

namespace wb::core {

uint32_t default_context(uint32_t n_ctx_train) {
    return std::min<uint32_t>(std::max<uint32_t>(n_ctx_train, 1), kMaxDefaultContext);
}

uint32_t pool_for(uint32_t per_sequence, uint32_t n_seq) {
    const uint64_t cells = uint64_t{per_sequence} * std::max<uint32_t>(n_seq, 1);
    return static_cast<uint32_t>(std::min<uint64_t>(cells, uint64_t{1} << 24));
}

}  // namespace wb::core
