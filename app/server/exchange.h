#pragma once
// One request's events on their way from the session's delivery thread
// (core::EventSink, which must never block) to the HTTP worker thread that
// answers it. Thread-safe.
// Qt-free.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/engine_session.h"

namespace wb::server {

class Exchange {
  public:
    /// The sink side: keeps `e` (cheap, never blocks for long).
    void push(const core::RequestEvent& e);
    /// Waits up to `wait` for the first event without taking it; its type,
    /// or nullopt on timeout.
    std::optional<core::RequestEvent::Type> peek(std::chrono::milliseconds wait);
    /// Takes every kept event, waiting up to `wait` for one (empty on timeout).
    std::vector<core::RequestEvent> take(std::chrono::milliseconds wait);
    /// The Finished event's result once delivered, waiting up to `wait`
    /// (events before it are dropped); null on timeout.
    std::shared_ptr<const core::FinishedRequest> wait_finished(std::chrono::milliseconds wait);
    /// The result if the Finished event has been delivered, else null.
    std::shared_ptr<const core::FinishedRequest> finished() const;

  private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<core::RequestEvent> events_;
    std::shared_ptr<const core::FinishedRequest> finished_;
};

}  // namespace wb::server
