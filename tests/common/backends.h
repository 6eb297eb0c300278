#pragma once
// Which backends the build under test has. A CPU-only build (-DWB_VULKAN=OFF)
// has no "vulkan": its CTest registration sets WB_TEST_NO_VULKAN=1
// (tests/CMakeLists.txt), so a test's Vulkan parts skip there, saying so,
// and run in every other build.

#include <QTest>
#include <QtGlobal>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace wbtest {

/// False in a CPU-only build's tests (WB_TEST_NO_VULKAN set), else true.
inline bool vulkan_built() {
    return qEnvironmentVariableIsEmpty("WB_TEST_NO_VULKAN");
}

/// `names` without "vulkan" when the build has no Vulkan backend, in order.
inline std::vector<const char*> built_backends(std::initializer_list<const char*> names) {
    std::vector<const char*> out;
    for (const char* n : names)
        if (vulkan_built() || std::strcmp(n, "vulkan") != 0) out.push_back(n);
    return out;
}

}  // namespace wbtest

/// In a test function: skips it (QSKIP, with the reason) in a build without
/// the Vulkan backend.
#define WB_SKIP_WITHOUT_VULKAN()                                                     \
    do {                                                                             \
        if (!wbtest::vulkan_built())                                                 \
            QSKIP("this build has no Vulkan backend (-DWB_VULKAN=OFF)");            \
    } while (0)
