#include "scheduler/event_queue.h"

namespace wb::scheduler {

std::function<void(const Event&)> EventQueue::sink() {
    return [this](const Event& e) {
        {
            std::lock_guard lock(mu_);
            q_.push_back(e);
        }
        cv_.notify_one();
    };
}

size_t EventQueue::wait_pop(std::vector<Event>& out, std::chrono::milliseconds timeout) {
    std::deque<Event> taken;
    {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, timeout, [&] { return !q_.empty(); });
        taken.swap(q_);
    }
    for (Event& e : taken) out.push_back(std::move(e));
    return taken.size();
}

size_t EventQueue::pop(std::vector<Event>& out) {
    return wait_pop(out, std::chrono::milliseconds(0));
}

}  // namespace wb::scheduler
