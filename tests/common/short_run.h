#pragma once
// The short form of the costliest tests, for the sanitizer suite.
//
// Why: under AddressSanitizer at -O1 a test that mostly checks shader
// numerics on lavapipe spends its time in the driver's compiler and in the
// float64 references, neither of which the sanitizers learn anything from;
// the release suite runs the full matrix. The short form keeps every code
// path of our host code (one tensor type per block shape, every kernel and
// path) so the sanitizers still see all of it. tests/CMakeLists.txt sets
// WB_TEST_SHORT=1 for every test of a WB_SANITIZE build.

#include <cstdlib>
#include <string_view>

namespace wbtest {

/// True when WB_TEST_SHORT is set to anything but "" or "0".
inline bool short_run() {
    const char* s = std::getenv("WB_TEST_SHORT");
    return s && *s && std::string_view(s) != "0";
}

}  // namespace wbtest
