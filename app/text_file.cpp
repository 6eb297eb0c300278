#include "text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "gguf/path_kind.h"

namespace wb {

namespace {

std::string mib(uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
    return buf;
}

// Closes the descriptor on every path out.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of
    // waiting forever; the type check below then refuses it.
    Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (f.fd < 0)
        throw std::runtime_error(path + ": cannot read the " + what + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0)
        throw std::runtime_error(path + ": cannot read the " + what + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) {
        const char* kind = gguf::describe_path_kind(st.st_mode);
        throw std::runtime_error(path + ": the " + what + " is not a regular file (it is " + kind +
                                 "); save it to a file and give that path");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_bytes)
        throw std::runtime_error(path + ": the " + what + " is " + mib(size) + ", more than the " +
                                 mib(max_bytes) + " limit");
    std::string out;
    out.resize(static_cast<size_t>(size));
    size_t got = 0;
    for (;;) {
        if (got == out.size()) {
            // At the size fstat gave: read on only if the file grew since.
            if (out.size() >= max_bytes + 1) break;
            out.resize(std::min<uint64_t>(out.size() + (1 << 16), max_bytes + 1));
        }
        const ssize_t n = ::read(f.fd, out.data() + got, out.size() - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(path + ": cannot read the " + what + ": " +
                                     std::strerror(errno));
        }
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    if (got > max_bytes)
        throw std::runtime_error(path + ": the " + what + " grew past the " + mib(max_bytes) +
                                 " limit while it was read");
    out.resize(got);
    return out;
}

}  // namespace wb
