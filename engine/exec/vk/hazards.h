#pragma once
// vk::HazardTracker: decides where a command buffer needs a barrier. It
// remembers the buffers read and written by the ops recorded since the
// last barrier; the next op needs one first when it reads a buffer one of
// them wrote (read after write), writes one they wrote (write after write)
// or writes one they read (write after read): the three hazards of the
// Vulkan spec's memory model (chapter 7, "Synchronization and Cache
// Control"). Whole buffers are tracked (ops writing disjoint columns of
// one buffer still wait for each other), which can only add barriers.

#include <cstdint>
#include <vector>

namespace wb::vk {

class HazardTracker {
  public:
    /// Buffers are named by any 64-bit id that is unique while the command
    /// buffer is recorded (the VkBuffer handle).
    using Id = uint64_t;

    /// True when an op reading `reads` and writing `writes` (either may
    /// name a buffer twice or hold one buffer in both) must wait for a
    /// barrier after the ops added since the last barrier().
    bool conflicts(const std::vector<Id>& reads, const std::vector<Id>& writes) const;
    /// Adds an op's accesses to the set since the last barrier.
    void add(const std::vector<Id>& reads, const std::vector<Id>& writes);
    /// A barrier was recorded: every op so far is ordered before what follows.
    void barrier();
    /// Buffers read / written since the last barrier (for tests).
    const std::vector<Id>& reads() const { return reads_; }
    const std::vector<Id>& writes() const { return writes_; }

  private:
    std::vector<Id> reads_, writes_;  // few entries: linear search beats hashing
};

}  // namespace wb::vk
