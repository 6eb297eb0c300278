#include "speculative/ngram_drafter.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wb::speculative {

NgramDrafter::NgramDrafter(uint32_t min_n, uint32_t max_n) : min_n_(min_n), max_n_(max_n) {
    if (min_n == 0 || min_n > max_n) {
        throw std::invalid_argument("NgramDrafter: need 1 <= min_n <= max_n, got min_n " +
                                    std::to_string(min_n) + ", max_n " + std::to_string(max_n));
    }
}

std::vector<int32_t> NgramDrafter::propose(int32_t, std::span<const int32_t> h, uint32_t k) {
    const size_t len = h.size();
    if (k == 0) return {};
    for (size_t n = max_n_; n >= min_n_; --n) {
        if (len < n + 1) continue;
        const auto suffix = h.subspan(len - n, n);
        // Most recent earlier occurrence starting at i, with a token after
        // it (i + n < len) and not the suffix itself (i < len - n).
        for (size_t i = len - n; i-- > 0;) {
            if (!std::equal(suffix.begin(), suffix.end(), h.begin() + static_cast<long>(i)))
                continue;
            const size_t from = i + n;
            const size_t to = std::min(len, from + k);
            return {h.begin() + static_cast<long>(from), h.begin() + static_cast<long>(to)};
        }
    }
    return {};
}

}  // namespace wb::speculative
