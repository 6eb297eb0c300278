#pragma once
// IQ4_NL's fixed non-linear table (ggml's kvalues_iq4nl): a block's 4-bit
// index q stands for d * kIq4nlValues[q]. Shared by the quantizer
// (quants_legacy.cpp) and the CPU dot kernels (engine/exec/cpu).

#include <cstdint>

namespace wb::ggml {

inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace wb::ggml
