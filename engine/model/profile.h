#pragma once
// Time per op, summed over decodes, and the per-op table `--profile` prints
// (op, calls, total ms, share). The Vulkan executor fills it from timestamp
// queries (GPU time), the CPU executor from its own clock (TimedOps).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wb::model {

/// One row of the per-op table.
struct ProfileRow {
    std::string op;         ///< op name, e.g. "mul_mat_vec q8_0"
    uint64_t calls = 0;     ///< dispatches (a weight bound in pieces counts each piece)
    double total_ms = 0.0;  ///< summed GPU time, milliseconds
    double share = 0.0;     ///< total_ms / sum over all ops, 0..1
};

/// Accumulates op timings. Not thread-safe (one engine thread records).
class Profile {
  public:
    void add(const std::string& op, double ms);
    void clear() { ops_.clear(); }
    bool empty() const { return ops_.empty(); }
    /// Rows sorted by total_ms, largest first.
    std::vector<ProfileRow> rows() const;
    /// Fixed-width text table with a total line, for --profile.
    std::string table() const;

  private:
    struct Acc {
        uint64_t calls = 0;
        double ms = 0.0;
    };
    std::map<std::string, Acc> ops_;
};

}  // namespace wb::model
