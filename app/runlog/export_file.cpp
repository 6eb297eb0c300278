// export_responses_to_file (exporter.h): the one place that turns an export
// into a file, for the CLI and the History tab alike, so a full disk, a
// missing folder or a damaged log read the same from both.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <utility>

#include "runlog/exporter.h"

namespace wb::runlog {

namespace {

// A streambuf over a C FILE* with its own 64 KiB buffer (std::cout is
// synchronized with stdio, i.e. unbuffered, which is slow for 1M rows).
// Remembers the first failed write (a full disk, a closed pipe) and its
// errno text: the exporter's exception only says that the stream failed,
// and errno is overwritten before it reaches the caller.
class FileBuf : public std::streambuf {
  public:
    explicit FileBuf(std::FILE* f) : f_(f) { setp(buf_, buf_ + sizeof buf_); }
    ~FileBuf() override { sync(); }
    bool failed() const { return failed_; }
    const std::string& error() const { return error_; }

  protected:
    int_type overflow(int_type c) override {
        if (sync() != 0) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override {
        if (failed_) return -1;
        const size_t n = static_cast<size_t>(pptr() - pbase());
        if ((n && std::fwrite(pbase(), 1, n, f_) != n) || std::fflush(f_) != 0) {
            failed_ = true;
            error_ = std::strerror(errno != 0 ? errno : EIO);
            return -1;
        }
        setp(buf_, buf_ + sizeof buf_);
        return 0;
    }

  private:
    std::FILE* f_;
    bool failed_ = false;
    std::string error_;
    char buf_[1 << 16];
};

}  // namespace

int64_t export_responses_to_file(const std::string& db_path, const ExportFilter& filter,
                                 ExportFormat format, const std::string& out_path,
                                 const ExportProgress& progress) {
    const bool to_file = out_path != "-";
    const std::string out_name = to_file ? out_path : std::string("standard output");
    std::FILE* f = to_file ? std::fopen(out_path.c_str(), "wb") : stdout;
    if (!f)
        throw std::runtime_error(out_name + ": cannot write the export: " + std::strerror(errno));
    int64_t rows = 0;
    try {
        std::fflush(stdout);
        {
            FileBuf buf(f);
            std::ostream out(&buf);
            try {
                rows = export_responses_readonly(db_path, filter, format, out, progress);
            } catch (const std::runtime_error&) {
                if (!buf.failed()) throw;  // the log's problem, not the output's
            }
            if (buf.pubsync() != 0 || buf.failed())
                throw std::runtime_error(out_name + ": cannot write the export: " + buf.error() +
                                         " (the export is incomplete)");
        }
        if (to_file && std::fclose(std::exchange(f, nullptr)) != 0)
            throw std::runtime_error(out_name + ": cannot write the export: " +
                                     std::strerror(errno) + " (the export is incomplete)");
    } catch (...) {
        if (to_file) {
            if (f) std::fclose(f);
            // Never leave half an export that looks whole; only a regular
            // file is removed (removing /dev/full after a failed write, as
            // root, deleted the device node).
            std::error_code ec;
            if (std::filesystem::is_regular_file(std::filesystem::symlink_status(out_path, ec)))
                std::filesystem::remove(out_path, ec);
        }
        throw;
    }
    return rows;
}

}  // namespace wb::runlog
