#include "exec/cpu/bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "exec/cpu/huge_buffer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace wb::cpu {

namespace {

constexpr uint64_t kChunk = 1u << 20;  // bytes per task
constexpr uint64_t kPattern = 0x9E3779B97F4A7C15ull;

/// First line of a small sysfs file, or "" when it cannot be read.
std::string first_line(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string s;
    std::getline(in, s);
    return s;
}

/// "32768K" / "1M" / "4096" in bytes; 0 when not a number.
uint64_t parse_size(const std::string& s) {
    size_t used = 0;
    uint64_t v = 0;
    try {
        v = std::stoull(s, &used);
    } catch (const std::exception&) {
        return 0;
    }
    const std::string unit = s.substr(used);
    if (unit.empty()) return v;
    if (unit == "K") return v << 10;
    if (unit == "M") return v << 20;
    if (unit == "G") return v << 30;
    return 0;
}

uint64_t sum_scalar(const uint64_t* p, uint64_t n) noexcept {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; ++i) s0 += p[i];
    return (s0 + s1) + (s2 + s3);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint64_t* p, uint64_t n) noexcept {
    // Four independent 256-bit accumulators: 128 bytes per iteration, so
    // the loop issues loads faster than memory delivers them.
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    uint64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
        a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
        a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
        a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
    }
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                       _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + sum_scalar(p + i, n - i);
}
#endif

}  // namespace

uint64_t last_level_cache_bytes_in(const std::filesystem::path& cache_dir) {
    std::error_code ec;
    std::filesystem::directory_iterator it(cache_dir, ec);
    if (ec) return 0;
    int best_level = -1;
    uint64_t best = 0;
    for (const auto& e : it) {
        const std::string name = e.path().filename().string();
        if (name.rfind("index", 0) != 0) continue;
        if (first_line(e.path() / "type") == "Instruction") continue;
        int level = 0;
        try {
            level = std::stoi(first_line(e.path() / "level"));
        } catch (const std::exception&) {
            continue;
        }
        const uint64_t size = parse_size(first_line(e.path() / "size"));
        if (size == 0) continue;
        if (level > best_level || (level == best_level && size > best)) {
            best_level = level;
            best = size;
        }
    }
    return best;
}

uint64_t last_level_cache_bytes() {
    if (const uint64_t b = last_level_cache_bytes_in("/sys/devices/system/cpu/cpu0/cache"))
        return b;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    for (const int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long v = sysconf(name);
        if (v > 0) return static_cast<uint64_t>(v);
    }
#endif
    return 0;
}

uint64_t bandwidth_buffer_bytes(uint64_t llc_bytes) {
    const uint64_t want = std::max<uint64_t>(uint64_t{256} << 20, 4 * llc_bytes);
    return (want + kChunk - 1) / kChunk * kChunk;
}

uint64_t read_sum(const uint64_t* p, uint64_t n_words, Isa isa) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return sum_avx2(p, n_words);
#endif
    (void)isa;
    return sum_scalar(p, n_words);
}

ReadBandwidth measure_read_bandwidth(ThreadPool& pool, Isa isa, uint64_t bytes, int reps) {
    if (bytes < kChunk || bytes % kChunk != 0)
        throw std::invalid_argument("read bandwidth: buffer of " + std::to_string(bytes) +
                                    " bytes is not a positive multiple of 1 MiB");
    if (reps < 1)
        throw std::invalid_argument("read bandwidth: " + std::to_string(reps) +
                                    " repetitions; at least 1 needed");
    const uint64_t chunk_words = kChunk / 8;
    const auto tasks = static_cast<uint32_t>(bytes / kChunk);
    // On the pages repacked weights get (alloc_huge), so that decode's share
    // of this figure compares like with like. Left untouched here so that
    // the pool's threads place the pages.
    const HugeBuffer buf = alloc_huge(bytes);
    uint64_t* p = reinterpret_cast<uint64_t*>(buf.get());
    pool.run(tasks, [&](uint32_t t, unsigned) {
        for (uint64_t i = t * chunk_words; i < (t + 1) * chunk_words; ++i) p[i] = i * kPattern;
    });
    std::vector<uint64_t> part(tasks);
    const auto pass = [&] {
        pool.run(tasks, [&](uint32_t t, unsigned) {
            part[t] = read_sum(p + t * chunk_words, chunk_words, isa);
        });
    };
    ReadBandwidth r;
    r.bytes = bytes;
    pass();  // warm-up: page tables, the threads awake
    for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        pass();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.gbps.push_back(s > 0 ? static_cast<double>(bytes) / s / 1e9 : 0.0);
    }
    for (const uint64_t v : part) r.checksum += v;
    return r;
}

}  // namespace wb::cpu
