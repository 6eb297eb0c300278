#pragma once
// Where the tests' fixtures (../shared: models/, golden/) are.

#include <cstdlib>
#include <string>

namespace wbtest {

/// Fixture folder: $WB_SHARED_DIR when set (the GPU check bundle carries
/// its own copy, tests/gpu/prepare.sh), else the path compiled in by
/// tests/CMakeLists.txt (WB_SHARED_DIR, default ../shared).
inline std::string shared_dir() {
    if (const char* s = std::getenv("WB_SHARED_DIR"); s && *s) return s;
    return WB_SHARED_DIR;
}

}  // namespace wbtest
