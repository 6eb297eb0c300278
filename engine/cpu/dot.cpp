#include "cpu/dot.h"

namespace wb::cpu {

const WeightKernel* weight_kernel(uint32_t type, Isa isa) noexcept {
    if (isa == Isa::Avx2 && isa_available(Isa::Avx2)) return detail::avx2_kernel(type);
    return detail::scalar_kernel(type);
}

}  // namespace wb::cpu
