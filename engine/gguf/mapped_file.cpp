#include "gguf/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "errors/errors.h"
#include "gguf/path_kind.h"

namespace wb::gguf {

namespace {

// ---- the SIGBUS guard (see mapped_file.h) -----------------------------------
// The handler reads this table with lock-free atomics only; registration
// and removal take a mutex among themselves.

constexpr int kMaxGuarded = 256;  // mappings alive at once (models, their variants)

struct GuardSlot {
    std::atomic<uintptr_t> begin{0};  // 0: free
    std::atomic<uintptr_t> end{0};
    std::atomic<uint64_t> fault_offset{UINT64_MAX};
};

GuardSlot g_slots[kMaxGuarded];
std::mutex g_slots_mu;
struct sigaction g_previous {};  // the handler before ours, for other faults
std::atomic<uintptr_t> g_page_mask{~uintptr_t{4095}};

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (GuardSlot& s : g_slots) {
        const uintptr_t b = s.begin.load(std::memory_order_acquire);
        const uintptr_t e = s.end.load(std::memory_order_acquire);
        if (b == 0 || addr < b || addr >= e) continue;
        // Zero pages over the rest of the mapping: every page past the new
        // end of file would fault the same way. mmap is a plain system call.
        const uintptr_t page = addr & g_page_mask.load(std::memory_order_relaxed);
        void* p = ::mmap(reinterpret_cast<void*>(page), e - page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED) break;  // cannot repair: die as without the guard
        const uint64_t off = page > b ? page - b : 0;
        uint64_t seen = s.fault_offset.load(std::memory_order_relaxed);
        while (off < seen && !s.fault_offset.compare_exchange_weak(seen, off)) {
        }
        return;  // the faulting read runs again and sees zeros
    }
    // Not a guarded mapping: do what would have happened without us.
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
        g_previous.sa_handler != nullptr) {
        g_previous.sa_handler(sig);
        return;
    }
    ::signal(SIGBUS, SIG_DFL);  // the read faults again and the default action ends the process
}

// Installs on_sigbus unless it is the current handler (someone may have
// replaced it since; then that one becomes the previous handler).
void ensure_handler_locked() {
    struct sigaction cur {};
    if (::sigaction(SIGBUS, nullptr, &cur) != 0) return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == &on_sigbus) return;
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page_mask.store(~(static_cast<uintptr_t>(page) - 1));
    g_previous = cur;
    struct sigaction sa {};
    sa.sa_sigaction = &on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
}

int register_guard(const uint8_t* data, uint64_t size) {
    std::lock_guard lock(g_slots_mu);
    ensure_handler_locked();
    for (int i = 0; i < kMaxGuarded; ++i) {
        GuardSlot& s = g_slots[i];
        if (s.begin.load() != 0) continue;
        s.fault_offset.store(UINT64_MAX);
        s.end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_release);
        s.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
        return i;
    }
    return -1;
}

void unregister_guard(int slot) {
    std::lock_guard lock(g_slots_mu);
    g_slots[slot].begin.store(0, std::memory_order_release);
    g_slots[slot].end.store(0, std::memory_order_release);
}

}  // namespace

MappedFile::MappedFile(const std::string& path) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer forever; the type check below refuses it right away.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw FileError(path, path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw FileError(path, path + ": cannot stat: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        const char* what = describe_path_kind(st.st_mode);
        throw FileError(path, path + ": not a regular file (it is " + std::string(what) +
                                  "); give the path of a .gguf file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw FileError(path, path + ": cannot map " + std::to_string(size_) +
                                      " bytes: " + std::strerror(err));
        }
        data_ = static_cast<const uint8_t*>(p);
        guard_slot_ = register_guard(data_, size_);
        if (guard_slot_ < 0) {
            release();
            ::close(fd);
            throw FileError(path, path + ": cannot map: more than " + std::to_string(kMaxGuarded) +
                                      " model files are open at once");
        }
    }
    ::close(fd);  // the mapping keeps the file alive
}

void MappedFile::release() noexcept {
    if (guard_slot_ >= 0) unregister_guard(guard_slot_);
    guard_slot_ = -1;
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

MappedFile::~MappedFile() {
    release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      guard_slot_(std::exchange(other.guard_slot_, -1)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        guard_slot_ = std::exchange(other.guard_slot_, -1);
    }
    return *this;
}

std::optional<uint64_t> MappedFile::truncated_at() const {
    if (guard_slot_ < 0) return std::nullopt;
    const uint64_t off = g_slots[guard_slot_].fault_offset.load(std::memory_order_acquire);
    if (off == UINT64_MAX) return std::nullopt;
    return off;
}

}  // namespace wb::gguf
