#include "model/rope.h"

#include <cmath>

namespace wb::model {

void rope_cos_sin(const HParams& hp, const RopeConfig& rope, const int32_t* pos, size_t n_tok,
                  float* cs) {
    const uint32_t half = hp.n_rot / 2;
    for (size_t t = 0; t < n_tok; ++t) {
        for (uint32_t i = 0; i < half; ++i) {
            const double factor =
                i < hp.rope_freq_factors.size() ? double{hp.rope_freq_factors[i]} : 1.0;
            const double theta = pos[t] * double{rope.freq_scale} *
                                 std::pow(double{rope.freq_base}, -2.0 * i / double(hp.n_rot)) /
                                 factor;
            cs[(t * half + i) * 2] = static_cast<float>(std::cos(theta));
            cs[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(theta));
        }
    }
}

}  // namespace wb::model
