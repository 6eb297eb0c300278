#include "model/host_memory.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace wb::model {

namespace {

// "Key:   1234 kB" line of a /proc file, in bytes.
std::optional<uint64_t> proc_kb(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size() + 1, key + ":") != 0) continue;
        std::istringstream s(line.substr(key.size() + 1));
        uint64_t kb = 0;
        if (s >> kb) return kb * 1024;
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<uint64_t> read_number(const char* file) {
    std::ifstream in(file);
    uint64_t v = 0;
    if (in >> v) return v;  // "max" (no limit) fails to parse: nullopt
    return std::nullopt;
}

void consider(std::optional<HostMemory>& best, uint64_t bytes, const char* source) {
    if (!best || bytes < best->bytes) best = HostMemory{bytes, source};
}

void consider_rlimit(std::optional<HostMemory>& best, int resource, const char* status_key,
                     const char* source) {
    rlimit rl{};
    if (::getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
    const uint64_t used = proc_kb("/proc/self/status", status_key).value_or(0);
    const uint64_t limit = rl.rlim_cur;
    consider(best, limit > used ? limit - used : 0, source);
}

}  // namespace

std::optional<HostMemory> host_memory_available() {
    std::optional<HostMemory> best;
    if (auto avail = proc_kb("/proc/meminfo", "MemAvailable"))
        consider(best, *avail, "MemAvailable in /proc/meminfo");
    const auto max = read_number("/sys/fs/cgroup/memory.max");
    const auto cur = read_number("/sys/fs/cgroup/memory.current");
    if (max && cur) consider(best, *max > *cur ? *max - *cur : 0, "the cgroup's memory.max");
    consider_rlimit(best, RLIMIT_AS, "VmSize", "the address-space limit (ulimit -v)");
    consider_rlimit(best, RLIMIT_DATA, "VmData", "the data-segment limit (ulimit -d)");
    return best;
}

std::string format_bytes(uint64_t b) {
    char buf[64];
    if (b >= (uint64_t{1} << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
    else if (b >= (uint64_t{1} << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
    else
        std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
    return buf;
}

}  // namespace wb::model
