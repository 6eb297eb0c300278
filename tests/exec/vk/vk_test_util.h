#pragma once
// Helpers shared by the Vulkan tests: a seeded RNG that prints its seed
// (fresh inputs every run, reproducible with WB_TEST_SEED=<n>), error
// measures against float64 references, NaN poisoning, and the validation
// check every test ends with.

#include <QtTest>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "exec/vk/context.h"

namespace wb::vk::test {

/// Fixture folder (tests/common/data_dir.h).
inline std::string data_dir() {
    return wbtest::data_dir();
}

/// Validation is on in every test unless WB_VK_NO_VALIDATION=1 (only for
/// a machine without the layer, e.g. the GPU check when none is carried).
inline bool validation_wanted() {
    const char* s = std::getenv("WB_VK_NO_VALIDATION");
    return !(s && *s && std::string(s) != "0");
}

inline uint64_t test_seed() {
    static const uint64_t seed = [] {
        if (const char* s = std::getenv("WB_TEST_SEED"))
            return uint64_t{std::strtoull(s, nullptr, 10)};
        return uint64_t{std::random_device{}()} ^ (uint64_t{std::random_device{}()} << 32);
    }();
    return seed;
}

inline std::mt19937_64& rng() {
    static std::mt19937_64 r(test_seed());
    return r;
}

/// Uniform in [lo, hi) and never exactly zero.
inline float rand_float(float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    for (;;) {
        const float v = d(rng());
        if (v != 0.0f) return v;
    }
}

inline std::vector<float> rand_vec(size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(n);
    for (float& x : v) x = rand_float(lo, hi);
    return v;
}

/// max |got - want| / max |want|: the error relative to the output's scale
/// (elementwise relative error is meaningless where sums cancel to ~0).
inline double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double g = static_cast<double>(got[i]);
        if (!std::isfinite(g))
            return INFINITY;  // a NaN left by the poison means an unwritten output
        num = std::max(num, std::abs(g - want[i]));
        den = std::max(den, std::abs(want[i]));
    }
    return den > 0.0 ? num / den : num;
}

/// Quiet NaN bits used to poison output buffers before a kernel runs.
inline constexpr uint32_t kNaN = 0x7FC00000u;

/// Fails the current test if the validation layer reported any error.
inline void expect_clean(const Context& ctx) {
    if (!validation_wanted()) return;
    const ValidationLog* log = ctx.validation();
    QVERIFY2(log != nullptr, "validation layer is not enabled");
    if (log->errors() != 0) {
        std::string all;
        for (const auto& m : log->messages()) all += m + "\n";
        QFAIL(("validation layer reported errors:\n" + all).c_str());
    }
}

}  // namespace wb::vk::test
