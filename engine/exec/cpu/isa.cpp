#include "exec/cpu/isa.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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
        case Isa::AvxVnni: {
#if defined(__x86_64__) || defined(__i386__)
            // GCC 12's __builtin_cpu_supports does not know "avxvnni": read
            // CPUID once (weight_kernel asks per matmul, and CPUID traps to
            // the hypervisor in a VM); the OS's YMM state is covered by the
            // AVX2 check.
            static const bool vnni = [] {
                unsigned a = 0, b = 0, c = 0, d = 0;
                return isa_available(Isa::Avx2) && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 &&
                       ((a >> 4) & 1u) != 0;
            }();
            return vnni;
#else
            return false;
#endif
        }
        case Isa::Avx512:
#if defined(__x86_64__) || defined(__i386__)
            // libgcc's feature bits for AVX-512 already require the OS's
            // ZMM state (XCR0) as well as CPUID.
            return isa_available(Isa::Avx2) && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni");
#else
            return false;
#endif
    }
    return false;
}

Isa best_isa() noexcept {
    const char* env = std::getenv("WB_CPU_ISA");
    if (env != nullptr && std::strcmp(env, "scalar") == 0) return Isa::Scalar;
    const bool cap_avx2 = env != nullptr && std::strcmp(env, "avx2") == 0;
    const bool cap_vnni = cap_avx2 || (env != nullptr && std::strcmp(env, "avx-vnni") == 0);
    if (!cap_vnni && isa_available(Isa::Avx512)) return Isa::Avx512;
    if (!cap_avx2 && isa_available(Isa::AvxVnni)) return Isa::AvxVnni;
    return isa_available(Isa::Avx2) ? Isa::Avx2 : Isa::Scalar;
}

const char* isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::Avx2:
            return "avx2";
        case Isa::AvxVnni:
            return "avx-vnni";
        case Isa::Avx512:
            return "avx512";
        case Isa::Scalar:
            break;
    }
    return "scalar";
}

}  // namespace wb::cpu
