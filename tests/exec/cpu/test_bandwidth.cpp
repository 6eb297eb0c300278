// The read-bandwidth measurement (engine/exec/cpu/bandwidth.h), for correctness
// only (no timing asserts: the figures depend on the machine and its load):
//  - the last-level cache read from hand-made sysfs trees (sizes in K and
//    M, instruction caches skipped, unreadable entries skipped);
//  - the buffer size rule max(256 MiB, 4 x LLC) in whole MiB, hand-worked;
//  - read_sum on every ISA equals a plain loop's wrapping sum, at odd
//    lengths and an odd word offset;
//  - a threaded measurement reads every word exactly once: its checksum
//    equals the closed form K n (n - 1) / 2 mod 2^64 of the fill pattern;
//  - alloc_huge (the probe's and the repacked weights' buffers) is 2 MiB
//    aligned, writable to its rounded end, and its mapping is eligible for
//    transparent huge pages where the kernel's THP mode allows it (read back
//    from /proc/self/smaps, the kernel's own account).

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/cpu/bandwidth.h"
#include "exec/cpu/huge_buffer.h"
#include "exec/cpu/isa.h"
#include "exec/cpu/thread_pool.h"

using namespace wb::cpu;
namespace fs = std::filesystem;

namespace {

/// index<i>/{level,type,size} under dir, as the kernel lays them out.
void add_cache(const fs::path& dir, int i, const std::string& level, const std::string& type,
               const std::string& size) {
    const fs::path d = dir / ("index" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
}

/// The "THPeligible:" value of the /proc/self/smaps entry holding address
/// a, or -1 when there is no such entry or field (not Linux, an old kernel).
int thp_eligible(uintptr_t a) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo <= a && a < hi;
            continue;
        }
        if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
    }
    return -1;
}

/// The kernel's THP mode, the bracketed word of
/// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
/// "never"), or "" when the file is absent.
std::string thp_mode() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string all;
    std::getline(f, all);
    const size_t b = all.find('['), e = all.find(']');
    return b == std::string::npos || e == std::string::npos ? "" : all.substr(b + 1, e - b - 1);
}

std::vector<Isa> isas() {
    std::vector<Isa> v{Isa::Scalar};
    if (isa_available(Isa::Avx2)) v.push_back(Isa::Avx2);
    return v;
}

}  // namespace

class TestBandwidth : public QObject {
    Q_OBJECT
  private slots:
    void llc_from_sysfs() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const fs::path zen = fs::path(tmp.path().toStdString()) / "zen";
        add_cache(zen, 0, "1", "Data", "48K");
        add_cache(zen, 1, "1", "Instruction", "32K");
        add_cache(zen, 2, "2", "Unified", "1024K");
        add_cache(zen, 3, "3", "Unified", "32768K");
        QCOMPARE(last_level_cache_bytes_in(zen), uint64_t{32768} * 1024);
        // No L3; an L2 in M; a broken entry (size not a number) is skipped;
        // a larger instruction cache never counts.
        const fs::path small = fs::path(tmp.path().toStdString()) / "small";
        add_cache(small, 0, "1", "Data", "32K");
        add_cache(small, 1, "2", "Unified", "2M");
        add_cache(small, 2, "3", "Unified", "lots");
        add_cache(small, 3, "4", "Instruction", "64M");
        QCOMPARE(last_level_cache_bytes_in(small), uint64_t{2} << 20);
        QCOMPARE(last_level_cache_bytes_in(fs::path(tmp.path().toStdString()) / "missing"),
                 uint64_t{0});
    }

    void buffer_size_rule() {
        const uint64_t mib = 1u << 20;
        QCOMPARE(bandwidth_buffer_bytes(0), 256 * mib);
        QCOMPARE(bandwidth_buffer_bytes(32 * mib), 256 * mib);  // 4 x 32 = 128 < 256
        QCOMPARE(bandwidth_buffer_bytes(100 * mib), 400 * mib);
        QCOMPARE(bandwidth_buffer_bytes(100 * mib + 1), 401 * mib);  // 400 MiB + 4 B, rounded up
    }

    void read_sum_matches_plain_loop() {
        std::mt19937_64 rng(std::random_device{}());
        std::vector<uint64_t> v(4099);
        for (uint64_t& w : v) w = rng();
        for (const Isa isa : isas()) {
            for (const uint64_t n : {0u, 1u, 15u, 16u, 17u, 1000u, 4098u}) {
                uint64_t want = 0;
                for (uint64_t i = 0; i < n; ++i) want += v[1 + i];  // wraps mod 2^64
                QCOMPARE(read_sum(v.data() + 1, n, isa), want);
            }
        }
    }

    void measurement_reads_every_word_once() {
        for (const Isa isa : isas()) {
            ThreadPool pool(2);
            const uint64_t bytes = 8u << 20;
            const ReadBandwidth r = measure_read_bandwidth(pool, isa, bytes, 3);
            QCOMPARE(r.bytes, bytes);
            QCOMPARE(r.gbps.size(), size_t{3});
            for (const double g : r.gbps) QVERIFY(std::isfinite(g) && g > 0.0);
            // sum_i i K = K n (n - 1) / 2; n (n - 1) / 2 = 2^39 - 2^19 fits
            // in 64 bits, the product wraps as the words' sum does.
            const uint64_t n = bytes / 8;
            const uint64_t want = n * (n - 1) / 2 * uint64_t{0x9E3779B97F4A7C15};
            QCOMPARE(r.checksum, want);
        }
    }

    void huge_buffer_aligned_and_advised() {
        constexpr uintptr_t kHuge = uintptr_t{2} << 20;
        for (const size_t bytes : {size_t{0}, size_t{1}, size_t{3} << 20}) {
            const HugeBuffer b = alloc_huge(bytes);
            const auto a = reinterpret_cast<uintptr_t>(b.get());
            QVERIFY(b != nullptr);
            QCOMPARE(a % kHuge, uintptr_t{0});
            // Writable to the rounded end (ASan checks the bound).
            const size_t rounded = bytes == 0 ? kHuge : (bytes + kHuge - 1) / kHuge * kHuge;
            b.get()[0] = 1;
            b.get()[rounded - 1] = 2;
            QCOMPARE(int{b.get()[rounded - 1]}, 2);
        }
        const std::string mode = thp_mode();
        if (mode != "madvise" && mode != "always")
            QSKIP("transparent huge pages are off on this machine");
        const HugeBuffer b = alloc_huge(size_t{8} << 20);
        const int eligible = thp_eligible(reinterpret_cast<uintptr_t>(b.get()));
        if (eligible < 0) QSKIP("no THPeligible field in /proc/self/smaps");
        QCOMPARE(eligible, 1);
    }

    void bad_arguments_throw() {
        ThreadPool pool(1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 measure_read_bandwidth(pool, Isa::Scalar, 1000, 1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 measure_read_bandwidth(pool, Isa::Scalar, 0, 1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 measure_read_bandwidth(pool, Isa::Scalar, 1u << 20, 0));
    }
};

QTEST_GUILESS_MAIN(TestBandwidth)
#include "test_bandwidth.moc"
