#pragma once
// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface, as lowercase hex —
// the same text `sha256sum` prints.

#include <string>
#include <string_view>

namespace wb::runlog {

/// SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// SHA-256 of the whole file at `path`, read in 1 MiB chunks (memory does
/// not grow with the file). Throws std::runtime_error "<path>: cannot read:
/// <reason>" when the file cannot be opened or read.
std::string sha256_file_hex(const std::string& path);

}  // namespace wb::runlog
