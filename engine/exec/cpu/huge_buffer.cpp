// alloc_huge: 2 MiB aligned buffers with the transparent-huge-page advice.

#include "exec/cpu/huge_buffer.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace wb::cpu {

HugeBuffer alloc_huge(size_t bytes) {
    constexpr size_t kHuge = size_t{2} << 20;  // x86-64 and arm64 (4 KiB granule) PMD size
    const size_t rounded = bytes == 0 ? kHuge : (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
#endif
    return {static_cast<uint8_t*>(p), std::free};
}

}  // namespace wb::cpu
