#pragma once
// Reading a whole input file the user named (prompt sets, perplexity texts,
// test sets): regular files only, size checked before reading. A FIFO used
// to hang (open() waits for a writer) and /dev/zero grew memory without
// bound; both are refused at once now. Qt-free.

#include <cstdint>
#include <string>

namespace wb {

/// Largest input file read whole: 256 MiB (a prompt set of 60,000 prompts
/// of 4 KiB each is 240 MiB).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{256} << 20;

/// The bytes of the regular file at `path`, at most `max_bytes`. `what`
/// names the file's role in messages ("prompts file"). Throws
/// std::runtime_error "<path>: cannot read the <what>: <errno text>" when
/// it cannot be opened or read, "<path>: the <what> is not a regular file
/// (it is a FIFO ...)" for a FIFO, device, socket or folder (the open never
/// blocks), and "<path>: the <what> is N MiB, more than the M MiB limit"
/// when it is larger than max_bytes (also when it grows past it while read).
std::string read_input_file(const std::string& path, const std::string& what,
                            uint64_t max_bytes = kMaxInputFileBytes);

}  // namespace wb
