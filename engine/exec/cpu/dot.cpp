#include "exec/cpu/dot.h"

namespace wb::cpu {

const WeightKernel* weight_kernel(uint32_t type, Isa isa) noexcept {
    if (isa == Isa::Avx512 && isa_available(Isa::Avx512)) return detail::avx512_kernel(type);
    if (isa == Isa::AvxVnni && isa_available(Isa::AvxVnni)) {
        if (const WeightKernel* k = detail::avxvnni_kernel(type)) return k;
        return detail::avx2_kernel(type);
    }
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return detail::avx2_kernel(type);
    return detail::scalar_kernel(type);
}

}  // namespace wb::cpu
