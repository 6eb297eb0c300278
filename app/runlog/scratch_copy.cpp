#include "runlog/scratch_copy.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "runlog/schema.h"

namespace wb::runlog {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "SQLite format 3";  // plus its NUL: 16 bytes

// Up to `n` bytes of `path` from `offset` (fewer at the end of the file;
// empty when it cannot be read). Read through SQLite's own VFS, never a
// plain open()/close(): closing any descriptor of a file drops every POSIX
// lock this process holds on it, including those of a SQLite connection
// the app keeps open on the same log, after which another process may
// checkpoint and delete the WAL under it
// (https://sqlite.org/howtocorrupt.html, section 2.2). SQLite's unix VFS
// keeps such a descriptor open until the process's locks are released.
std::vector<uint8_t> read_at(const std::string& path, uint64_t offset, size_t n) {
    sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    if (!vfs) return {};
    std::vector<uint8_t> storage(static_cast<size_t>(vfs->szOsFile));
    auto* file = reinterpret_cast<sqlite3_file*>(storage.data());
    int out_flags = 0;
    if (vfs->xOpen(vfs, path.c_str(), file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB,
                   &out_flags) != SQLITE_OK) {
        if (file->pMethods) file->pMethods->xClose(file);
        return {};
    }
    std::vector<uint8_t> buf;
    sqlite3_int64 size = 0;
    if (file->pMethods->xFileSize(file, &size) == SQLITE_OK &&
        static_cast<uint64_t>(size) > offset) {
        buf.resize(
            static_cast<size_t>(std::min<uint64_t>(n, static_cast<uint64_t>(size) - offset)));
        if (!buf.empty() && file->pMethods->xRead(file, buf.data(), static_cast<int>(buf.size()),
                                                  static_cast<sqlite3_int64>(offset)) != SQLITE_OK)
            buf.clear();
    }
    file->pMethods->xClose(file);
    return buf;
}

uint32_t be16(const uint8_t* p) {
    return uint32_t{p[0]} << 8 | p[1];
}

void put_be16(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

void put_be32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

bool btree_type(uint8_t t) {
    return t == 0x02 || t == 0x05 || t == 0x0a || t == 0x0d;
}

// Page 1's b-tree header (at offset 100) fits a page of `ps` bytes: a
// table b-tree type, cell pointers and the content start inside the page.
bool page1_fits(const std::vector<uint8_t>& p1, uint32_t ps) {
    if (p1.size() < 112) return false;
    const uint8_t type = p1[100];
    if (type != 0x0d && type != 0x05) return false;
    const uint32_t n_cells = be16(&p1[103]);
    uint32_t content = be16(&p1[105]);
    if (content == 0) content = 65536;
    if (content > ps || content < 100) return false;
    const size_t ptrs = 100 + (type == 0x05 ? 12 : 8);
    if (ptrs + 2 * n_cells > std::min<size_t>(p1.size(), ps)) return false;
    for (uint32_t i = 0; i < n_cells; ++i) {
        const uint32_t c = be16(&p1[ptrs + 2 * i]);
        if (c < content || c >= ps) return false;
    }
    return true;
}

}  // namespace

bool has_sqlite_header(const std::string& path) {
    const std::vector<uint8_t> h = read_at(path, 0, 16);
    return h.size() == 16 && std::memcmp(h.data(), kMagic, 16) == 0;
}

uint32_t guess_page_size(const std::string& path) {
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (ec || size < 1024) return 0;
    const std::vector<uint8_t> p1 = read_at(path, 0, 65536);
    for (uint32_t ps : {4096u, 1024u, 2048u, 8192u, 16384u, 32768u, 65536u, 512u}) {
        if (size % ps != 0 || size / ps < 2 || !page1_fits(p1, ps)) continue;
        // Most later pages start with a b-tree page type too (overflow and
        // freelist pages may not).
        const uint64_t n_pages = size / ps;
        int looked = 0, plausible = 0;
        for (uint64_t k = 1; k < n_pages && looked < 16; ++k, ++looked) {
            const std::vector<uint8_t> b = read_at(path, k * ps, 1);
            if (!b.empty() && (btree_type(b[0]) || b[0] == 0)) ++plausible;
        }
        if (looked > 0 && plausible * 4 >= looked * 3) return ps;
    }
    return 0;
}

ScratchCopy::ScratchCopy(const std::string& path) {
    std::string tmpl = (fs::temp_directory_path() / "wb-runlog-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw std::runtime_error(path + ": cannot make a private copy to read (no temp folder: " +
                                 std::strerror(errno) + ")");
    dir_ = tmpl;
    copy_ = (fs::path(dir_) / "copy.sqlite").string();
    try {
        fs::copy_file(path, copy_);
        std::error_code ec;
        if (fs::is_regular_file(path + "-wal", ec)) fs::copy_file(path + "-wal", copy_ + "-wal");
    } catch (const fs::filesystem_error& e) {
        fs::remove_all(dir_);
        throw std::runtime_error(path +
                                 ": cannot make a private copy to read: " + e.code().message());
    }
    if (has_sqlite_header(copy_)) return;
    const uint32_t ps = guess_page_size(copy_);
    if (ps == 0) return;  // not SQLite pages either: SQLite will say NOTADB
    std::array<uint8_t, 100> h{};
    std::memcpy(h.data(), kMagic, 16);
    put_be16(&h[16], ps == 65536 ? 1 : ps);
    std::error_code ec;
    const bool wal = fs::exists(copy_ + "-wal", ec);
    h[18] = h[19] = wal ? 2 : 1;  // file format: WAL when a -wal came along
    h[20] = 0;                    // reserved bytes per page
    h[21] = 64;                   // payload fractions, fixed by the format
    h[22] = 32;
    h[23] = 32;
    put_be32(&h[24], 1);  // change counter
    put_be32(&h[28], static_cast<uint32_t>(fs::file_size(copy_) / ps));
    // freelist (32, 36) stays 0: its pages are simply not reused.
    put_be32(&h[40], 1);  // schema cookie
    put_be32(&h[44], 4);  // schema format
    put_be32(&h[56], 1);  // UTF-8
    put_be32(&h[60], static_cast<uint32_t>(schema_version()));
    put_be32(&h[68], static_cast<uint32_t>(kApplicationId));
    put_be32(&h[92], 1);  // version-valid-for = change counter
    put_be32(&h[96], static_cast<uint32_t>(SQLITE_VERSION_NUMBER));
    std::fstream f(copy_, std::ios::binary | std::ios::in | std::ios::out);
    f.write(reinterpret_cast<const char*>(h.data()), h.size());
    rebuilt_ = static_cast<bool>(f);
}

ScratchCopy::~ScratchCopy() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
}

}  // namespace wb::runlog
