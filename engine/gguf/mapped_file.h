#pragma once
// Read-only memory map of a whole file (POSIX mmap), owned RAII-style.

#include <cstddef>
#include <cstdint>
#include <string>

namespace wb::gguf {

/// A read-only, private mapping of a file. Empty files map to size 0 with a
/// null data pointer. Throws std::runtime_error naming the path and errno
/// text when the file cannot be opened, stat'ed or mapped.
class MappedFile {
public:
    MappedFile() = default;
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }

private:
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace wb::gguf
