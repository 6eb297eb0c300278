#pragma once
// A private copy of a run-log file (and its -wal), for reading a file that
// may be damaged without any chance of changing it: SQLite opened on the
// original could create or rewrite its -shm and -wal, or roll back a hot
// journal. The copy lives in a fresh folder under the system temp folder
// and is removed with the object.
//
// When the copy's 100-byte SQLite header is not a header but the pages
// behind it look like SQLite pages (a damaged run log, not another kind
// of file), the copy gets a rebuilt header (sqlite.org/fileformat.html,
// section 1.3): magic, the page size found from page 1's b-tree header,
// the page count from the file size, UTF-8, schema format 4, no freelist,
// and the run log's application id and schema version.

#include <cstdint>
#include <string>

namespace wb::runlog {

/// The 100-byte header at the start of `path` is a SQLite 3 header
/// ("SQLite format 3\0"). False for a missing or short file too.
bool has_sqlite_header(const std::string& path);

/// The page size (512..65536) at which the file at `path` reads as SQLite
/// b-tree pages behind a damaged header, or 0 when it does not look like a
/// SQLite file at all (a text file, another format).
uint32_t guess_page_size(const std::string& path);

class ScratchCopy {
  public:
    /// Copies `path` (and `path`-wal when present) into a new temp folder;
    /// rebuilds the header when has_sqlite_header() is false and
    /// guess_page_size() finds pages. Throws std::runtime_error naming the
    /// file when the copy cannot be made (no space in the temp folder ...).
    explicit ScratchCopy(const std::string& path);
    ~ScratchCopy();
    ScratchCopy(const ScratchCopy&) = delete;
    ScratchCopy& operator=(const ScratchCopy&) = delete;

    /// The copy of the database file.
    const std::string& path() const { return copy_; }
    /// The header was rebuilt (the original's was damaged).
    bool header_rebuilt() const { return rebuilt_; }

  private:
    std::string dir_, copy_;
    bool rebuilt_ = false;
};

}  // namespace wb::runlog
