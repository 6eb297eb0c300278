#pragma once
// Which instruction set the CPU executor's kernels use. Every kernel has a
// portable scalar version; the AVX2 versions (AVX2 + FMA + F16C) are
// compiled into the same binary with per-function target attributes and
// picked at run time, so one build runs on any x86-64 and elsewhere.
// AvxVnni is the AVX2 set plus AVX-VNNI (Intel since Alder Lake and
// Sapphire Rapids, AMD since Zen 5): the 32-value-block kernels multiply
// uint8 x int8 and sum four products into int32 in one instruction
// (vpdpbusd) instead of two (vpmaddubsw, vpmaddwd); same integer sums.
// Avx512 is the AVX2 set plus AVX-512 F/BW/VL/VNNI (Intel since Ice Lake,
// AMD since Zen 4): where a type has a 512-bit kernel (cpu/dot.h: dot_x16) it
// is used, every other kernel is the AVX-VNNI one (or AVX2's, on a CPU
// without AVX-VNNI); the 512-bit kernels' sums are bit for bit those of the
// 256-bit kernels they stand in for.

namespace wb::cpu {

enum class Isa { Scalar, Avx2, AvxVnni, Avx512 };

/// Whether this CPU can run `isa` (Scalar always; Avx2 when the CPU reports
/// AVX2, FMA and F16C; AvxVnni when it also reports AVX-VNNI, CPUID leaf 7
/// subleaf 1 EAX bit 4; Avx512 when it reports AVX2 and AVX-512 F, BW, VL
/// and VNNI, and the OS saves the 512-bit state). Never throws.
bool isa_available(Isa isa) noexcept;

/// The best available ISA, capped by the environment variable WB_CPU_ISA
/// when it is "scalar", "avx2" or "avx-vnni" (to test or compare the other
/// paths).
Isa best_isa() noexcept;

/// Whether `isa` runs the AVX2 kernels (Avx2, AvxVnni and Avx512).
inline bool uses_avx2(Isa isa) noexcept {
    return isa == Isa::Avx2 || isa == Isa::AvxVnni || isa == Isa::Avx512;
}

/// "scalar", "avx2", "avx-vnni" or "avx512".
const char* isa_name(Isa isa) noexcept;

}  // namespace wb::cpu
