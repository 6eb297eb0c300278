#include "cpu/isa.h"

#include <cstdlib>
#include <cstring>

namespace wb::cpu {

bool isa_available(Isa isa) noexcept {
    switch (isa) {
        case Isa::Scalar:
            return true;
        case Isa::Avx2:
#if defined(__x86_64__) || defined(__i386__)
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("f16c");
#else
            return false;
#endif
    }
    return false;
}

Isa best_isa() noexcept {
    const char* env = std::getenv("WB_CPU_ISA");
    if (env != nullptr && std::strcmp(env, "scalar") == 0) return Isa::Scalar;
    return isa_available(Isa::Avx2) ? Isa::Avx2 : Isa::Scalar;
}

const char* isa_name(Isa isa) noexcept {
    return isa == Isa::Avx2 ? "avx2" : "scalar";
}

}  // namespace wb::cpu
