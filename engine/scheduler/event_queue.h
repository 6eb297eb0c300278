#pragma once
// A mutex-guarded FIFO of scheduler events for callers that would rather
// drain events on their own thread than handle them in the engine thread's
// callback: pass sink() to the Scheduler, then call wait_pop().

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "scheduler/request.h"

namespace wb::scheduler {

class EventQueue {
  public:
    /// A callback for Scheduler: appends a copy of the event (O(1) under a
    /// mutex the reader holds only to swap the buffer out, so the engine
    /// thread never waits on the reader's work). The queue must outlive the
    /// Scheduler.
    std::function<void(const Event&)> sink();

    /// Moves every queued event into `out` (appended, in order). Waits up to
    /// `timeout` for the first one; returns the number moved (0 on timeout).
    size_t wait_pop(std::vector<Event>& out, std::chrono::milliseconds timeout);
    /// Same without waiting.
    size_t pop(std::vector<Event>& out);

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Event> q_;
};

}  // namespace wb::scheduler
