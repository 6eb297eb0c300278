// Buffers for data streamed once per token (repacked weights, the
// bandwidth probe): aligned to 2 MiB and advised onto transparent huge pages.

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace wb::cpu {

/// Owns a buffer from alloc_huge (freed with std::free).
using HugeBuffer = std::unique_ptr<uint8_t, void (*)(void*)>;

/// Returns an uninitialized buffer of at least `bytes` bytes (rounded up to
/// 2 MiB), aligned to 2 MiB and advised MADV_HUGEPAGE on Linux. Why: decode
/// reads every weight byte once per token, and with 4 KiB pages a 4 GB model
/// costs a TLB miss per 4 KiB read; Linux's common THP mode "madvise" gives
/// huge pages only to regions that ask (see the kernel's
/// admin-guide/mm/transhuge). The advice may be ignored (THP "never", no
/// contiguous memory); the buffer is then on ordinary pages.
/// Throws std::bad_alloc when the allocation fails.
HugeBuffer alloc_huge(size_t bytes);

}  // namespace wb::cpu
