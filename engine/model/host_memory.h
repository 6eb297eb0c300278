#pragma once
// How much host memory a load may still take, read before allocating, so a
// CPU-backend KV cache of -c 16777216 (20 GiB for stories260K) is refused
// with a sentence instead of being attempted (and swapping, or failing
// with std::bad_alloc halfway through the load).

#include <cstdint>
#include <optional>
#include <string>

namespace wb::model {

/// Host memory available to this process, in bytes, and what limits it.
struct HostMemory {
    uint64_t bytes = 0;  ///< the least of the limits below that could be read
    /// Which limit that is, for messages: "MemAvailable in /proc/meminfo",
    /// "the cgroup's memory.max", "the address-space limit (ulimit -v)" or
    /// "the data-segment limit (ulimit -d)".
    std::string source;
};

/// The least of: MemAvailable (/proc/meminfo); the cgroup v2 limit minus
/// its usage (/sys/fs/cgroup/memory.max - memory.current); RLIMIT_AS minus
/// this process's VmSize and RLIMIT_DATA minus its VmData
/// (/proc/self/status). nullopt when none of them can be read (not Linux):
/// the caller then does not check. Never throws.
std::optional<HostMemory> host_memory_available();

/// "20.00 GiB" / "512.0 MiB" / "4096 bytes" for messages.
std::string format_bytes(uint64_t bytes);

}  // namespace wb::model
