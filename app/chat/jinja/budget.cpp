#include "chat/jinja/budget.h"

#include <atomic>

#include "chat/jinja/error.h"
#include "chat/jinja/value.h"

namespace wb::chat::jinja {

namespace {

thread_local RenderBudget* t_current = nullptr;
std::atomic<uint64_t> g_next_id{1};

std::string mib(size_t bytes) {
    if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes) + " bytes";
}

}  // namespace

RenderBudget::RenderBudget(size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                           int64_t time_limit_ms)
    : max_bytes_(max_bytes),
      deadline_(deadline),
      time_limit_ms_(time_limit_ms),
      id_(g_next_id.fetch_add(1)),
      previous_(t_current) {
    t_current = this;
}

RenderBudget::~RenderBudget() {
    // A namespace may hold itself (ns.self = ns): empty every namespace of
    // this render so the reference cycle ends. Their values give their
    // bytes back to this budget, still current here.
    for (const std::weak_ptr<Namespace>& w : namespaces_) {
        if (const std::shared_ptr<Namespace> ns = w.lock()) {
            std::vector<std::pair<Value, Value>> items;
            items.swap(ns->attrs.items);
        }
    }
    t_current = previous_;
}

RenderBudget* RenderBudget::current() noexcept {
    return t_current;
}

void RenderBudget::charge(size_t bytes) {
    if (bytes > max_bytes_ - held_) {
        throw Failure{Error::Kind::Limit, "the template's values would hold more than " +
                                              mib(max_bytes_) + " (the render's memory budget)"};
    }
    held_ += bytes;
    made_ += bytes;
    if (held_ > peak_) peak_ = held_;
}

void RenderBudget::release(size_t bytes) noexcept {
    held_ = bytes > held_ ? 0 : held_ - bytes;
}

void RenderBudget::need(size_t bytes) const {
    if (bytes > max_bytes_ - held_) {
        throw Failure{Error::Kind::Limit, "the result would need " + std::to_string(bytes) +
                                              " bytes, more than the " + mib(max_bytes_) +
                                              " the render's memory budget has left"};
    }
}

void RenderBudget::tick() {
    if ((++ticks_ & 255u) == 0) check_time();
}

void RenderBudget::check_time() const {
    if (std::chrono::steady_clock::now() > deadline_) {
        throw Failure{Error::Kind::Limit,
                      "rendering took longer than " + std::to_string(time_limit_ms_) + " ms"};
    }
}

void RenderBudget::adopt(const std::shared_ptr<Namespace>& ns) {
    namespaces_.push_back(ns);
}

Held& Held::operator=(Held&& o) noexcept {
    if (this != &o) {
        give_back();
        budget_ = o.budget_;
        bytes_ = o.bytes_;
        o.budget_ = 0;
        o.bytes_ = 0;
    }
    return *this;
}

void Held::take(size_t bytes) {
    give_back();
    RenderBudget* b = t_current;
    if (!b || bytes == 0) return;
    b->charge(bytes);
    budget_ = b->id();
    bytes_ = bytes;
}

void Held::give_back() noexcept {
    // Only to the budget that was charged: a value that outlives its
    // render (or was made in another one) gives nothing to this one.
    if (bytes_ != 0 && t_current && t_current->id() == budget_) t_current->release(bytes_);
    budget_ = 0;
    bytes_ = 0;
}

void need_bytes(size_t bytes) {
    if (t_current) t_current->need(bytes);
}

void tick_work() {
    if (t_current) t_current->tick();
}

}  // namespace wb::chat::jinja
