// The AVX2 dot kernels compiled for AVX-VNNI (isa.h: Isa::AvxVnni): the
// same source, with the uint8 x int8 block sums as vpdpbusd; the table is
// detail::avxvnni_kernel. One source for both keeps the two sets of sums
// identical by construction.
#define WB_DOT_VNNI 1
#include "dot_avx2.cpp"  // NOLINT(bugprone-suspicious-include): compiled twice on purpose
