#pragma once
// A STREAM-like read-bandwidth measurement of this machine's memory: the
// threads of a pool sum the 64-bit words of a buffer several times larger
// than the last-level cache, so every byte comes from DRAM. It is the
// ceiling a decode step (which reads every weight once per token) can
// approach on the CPU. Only reads are measured (STREAM's kernels also
// write; decode does not).

#include <cstdint>
#include <filesystem>
#include <vector>

#include "exec/cpu/isa.h"
#include "exec/cpu/thread_pool.h"

namespace wb::cpu {

/// Size in bytes of the highest-level cache described under `cache_dir`
/// (laid out like /sys/devices/system/cpu/cpu0/cache: index<N>/level and
/// index<N>/size, size as "32768K", "1M" or a byte count; instruction
/// caches skipped). Returns 0 when nothing can be read. Never throws.
uint64_t last_level_cache_bytes_in(const std::filesystem::path& cache_dir);

/// This machine's last-level cache in bytes: cpu0's sysfs entries, else
/// sysconf(_SC_LEVEL3_CACHE_SIZE) / _SC_LEVEL2_CACHE_SIZE, else 0.
uint64_t last_level_cache_bytes();

/// Bytes to read so that the cache holds a negligible part of them:
/// max(256 MiB, 4 x llc_bytes), rounded up to a whole number of 1 MiB chunks.
uint64_t bandwidth_buffer_bytes(uint64_t llc_bytes);

/// Wrapping sum (mod 2^64) of the n_words 64-bit words at p (8-byte
/// aligned), read with `isa`'s loads (AVX2: 256-bit; scalar: 64-bit, four
/// accumulators). The result does not depend on the ISA.
uint64_t read_sum(const uint64_t* p, uint64_t n_words, Isa isa) noexcept;

/// One measurement: GB/s (1e9 bytes per second) of each timed pass.
struct ReadBandwidth {
    uint64_t bytes = 0;        ///< buffer size read per pass
    std::vector<double> gbps;  ///< one per repetition, 1e9 bytes/s
    /// Wrapping sum of the buffer's words from the last pass; the buffer
    /// holds word i = i * 0x9E3779B97F4A7C15, so this equals
    /// 0x9E3779B97F4A7C15 * n (n - 1) / 2 mod 2^64 when every word was read
    /// exactly once (the tests check it).
    uint64_t checksum = 0;
};

/// Allocates `bytes` (a multiple of 1 MiB, at least 1 MiB; else
/// std::invalid_argument), fills it from the pool's threads (so pages are
/// placed near the threads that read them), reads it once untimed, then
/// `reps` (>= 1; else std::invalid_argument) timed passes of `pool` reading
/// 1 MiB chunks. Throws std::bad_alloc when the buffer cannot be allocated.
ReadBandwidth measure_read_bandwidth(ThreadPool& pool, Isa isa, uint64_t bytes, int reps);

}  // namespace wb::cpu
