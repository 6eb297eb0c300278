#pragma once
// Read-only memory map of a whole file (POSIX mmap), owned RAII-style, and
// guarded against the file shrinking while it is mapped.
//
// Why a guard: reading a page of a mapping that lies past the end of a file
// that another program truncated (or replaced in place) raises SIGBUS and
// kills the process. Reading the whole file into memory instead would cost
// its full size in RAM and a full read even for `info` on a multi-GB model;
// checking the size before each read leaves a window between check and
// read. So the mapping stays, and a process-wide SIGBUS handler (installed
// on the first mapping, chaining to whatever handler was there before)
// handles faults inside a registered mapping only: it maps zero pages over
// the rest of that mapping, records the offset, and lets the read go on.
// The reader then sees zeros; truncated_at() tells it the data is not the
// file's, and gguf::File::check_intact() turns that into an error naming
// the file. Faults anywhere else go to the previous handler (or the default
// action) exactly as before.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace wb::gguf {

/// A read-only, private mapping of a regular file. Empty files map to size
/// 0 with a null data pointer. Throws std::runtime_error naming the path
/// when the file cannot be opened, stat'ed or mapped, and when it is not a
/// regular file (a FIFO, a device such as /dev/zero, a folder): the open
/// never blocks (O_NONBLOCK), so a FIFO without a writer is refused at once
/// instead of hanging.
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

    /// The smallest file offset at which a read of the mapping found the
    /// file shorter than when it was mapped (bytes from there on read as
    /// zeros), or nullopt while every read saw the file's own bytes.
    std::optional<uint64_t> truncated_at() const;

  private:
    void release() noexcept;

    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    int guard_slot_ = -1;  // index in the SIGBUS guard's table, -1 when none
};

}  // namespace wb::gguf
