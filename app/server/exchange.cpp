#include "server/exchange.h"

namespace wb::server {

void Exchange::push(const core::RequestEvent& e) {
    {
        std::lock_guard lock(mu_);
        events_.push_back(e);
        if (e.type == core::RequestEvent::Type::Finished) finished_ = e.result;
    }
    cv_.notify_all();
}

std::optional<core::RequestEvent::Type> Exchange::peek(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, wait, [this] { return !events_.empty(); })) return std::nullopt;
    return events_.front().type;
}

std::vector<core::RequestEvent> Exchange::take(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [this] { return !events_.empty(); });
    std::vector<core::RequestEvent> out(events_.begin(), events_.end());
    events_.clear();
    return out;
}

std::shared_ptr<const core::FinishedRequest> Exchange::wait_finished(
    std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [this] { return finished_ != nullptr; });
    events_.clear();
    return finished_;
}

std::shared_ptr<const core::FinishedRequest> Exchange::finished() const {
    std::lock_guard lock(mu_);
    return finished_;
}

}  // namespace wb::server
