#pragma once
// What a path that is not a regular file is, in words, for the errors that
// refuse it: a model (gguf::MappedFile), a run log, an input file. One
// wording everywhere. Header-only (POSIX stat mode bits), so the app's
// small libraries use it without linking the GGUF reader.

#include <sys/stat.h>

namespace wb::gguf {

/// "a folder", "a FIFO (named pipe)", "a character device", "a block
/// device", "a socket", or "not a plain file" for `mode` (stat's st_mode)
/// of a non-regular file. Never throws.
inline const char* describe_path_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
}

}  // namespace wb::gguf
