#pragma once
// Helpers shared by the libFuzzer harnesses.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <new>
#include <string>
#include <string_view>

namespace wbfuzz {

/// Path of this process's scratch file (one per process, so several
/// fuzzers or -jobs workers never share one), in $TMPDIR or /tmp.
inline const std::string& scratch_path(const char* suffix) {
    static const std::string path = [suffix] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/wb_fuzz_" + std::to_string(::getpid()) +
               suffix;
    }();
    return path;
}

/// Writes `bytes` to `path` (truncating); aborts if that fails, since the
/// run would otherwise test nothing.
inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f) {
        std::fprintf(stderr, "cannot write scratch file %s\n", path.c_str());
        std::abort();
    }
}

/// Our rule for every error: it says what and where. A message without the
/// file path (when one is given) or an empty message is a finding.
inline void check_message(std::string_view what, std::string_view must_contain) {
    if (what.empty() ||
        (!must_contain.empty() && what.find(must_contain) == std::string_view::npos)) {
        std::fprintf(stderr, "error message lacks '%.*s': '%.*s'\n",
                     static_cast<int>(must_contain.size()), must_contain.data(),
                     static_cast<int>(what.size()), what.data());
        std::abort();
    }
}

/// The body of a file fuzzer: writes the input to this process's scratch
/// file with `suffix`, runs `check(path)`, and treats an allocation failure
/// (a size taken from the file without checking it) or an error message
/// that does not name the file as findings (abort).
template <class Check>
int check_file(const uint8_t* data, size_t size, const char* suffix, Check check) {
    const std::string& path = scratch_path(suffix);
    write_file(path, data, size);
    try {
        check(path);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "std::bad_alloc: an allocation sized from the file\n");
        std::abort();
    } catch (const std::exception& e) {
        check_message(e.what(), path);  // names the file (what) and the field or offset (where)
    }
    return 0;
}

}  // namespace wbfuzz
