#pragma once
// Where the tests' fixtures are: tests/data (models/, golden/, repro/,
// chat/, ...), each file's source, licence and SHA-256 in tests/data/README.md.

#include <cstdlib>
#include <string>

namespace wbtest {

/// Fixture folder: $WB_TEST_DATA_DIR when set (the GPU check bundle carries
/// its own copy, tests/gpu/prepare.sh), else the path compiled in by
/// tests/CMakeLists.txt (WB_TEST_DATA_DIR, default tests/data).
inline std::string data_dir() {
    if (const char* s = std::getenv("WB_TEST_DATA_DIR"); s && *s) return s;
    return WB_TEST_DATA_DIR;
}

}  // namespace wbtest
