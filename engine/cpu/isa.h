#pragma once
// Which instruction set the CPU executor's kernels use. Every kernel has a
// portable scalar version; the AVX2 versions (AVX2 + FMA + F16C) are
// compiled into the same binary with per-function target attributes and
// picked at run time, so one build runs on any x86-64 and elsewhere.

namespace wb::cpu {

enum class Isa { Scalar, Avx2 };

/// Whether this CPU can run `isa` (Scalar always; Avx2 when the CPU reports
/// AVX2, FMA and F16C). Never throws.
bool isa_available(Isa isa) noexcept;

/// The best available ISA, or Scalar when the environment variable
/// WB_CPU_ISA is "scalar" (to test or compare the portable path).
Isa best_isa() noexcept;

/// "scalar" or "avx2".
const char* isa_name(Isa isa) noexcept;

}  // namespace wb::cpu
