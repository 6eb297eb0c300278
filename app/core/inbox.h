#pragma once
// Inbox<T>: a mutex-guarded FIFO that a sink on the engine thread fills and
// a caller drains on its own thread (the CLI's main loop), so the engine
// never waits on the caller's work (printing, run-log writes).
// Header-only, Qt-free.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace wb::core {

template <typename T>
class Inbox {
  public:
    /// Appends `v` (O(1) under the mutex) and wakes a waiting reader.
    void push(T v) {
        {
            std::lock_guard lock(mu_);
            q_.push_back(std::move(v));
        }
        cv_.notify_all();
    }
    /// Moves everything queued into `out` (appended, in order), waiting up
    /// to `timeout` for the first item. Returns how many were moved.
    size_t wait_pop(std::vector<T>& out, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, timeout, [&] { return !q_.empty(); });
        const size_t n = q_.size();
        for (T& v : q_) out.push_back(std::move(v));
        q_.clear();
        return n;
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<T> q_;
};

}  // namespace wb::core
