#pragma once
// The memory and time one render may use. A chat template is a program
// that arrives inside a downloaded model file, so every value it makes is
// counted while it lives (strings by their bytes, lists and dicts by their
// slots), values cannot nest without bound, and long work reads the clock.
//
// The budget of the render running on a thread is found through
// RenderBudget::current(); values made outside a render (the variables a
// caller passes in, literals in a parsed template) are not counted.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wb::chat::jinja {

struct Namespace;

/// Deepest nesting of lists, dicts and namespaces inside each other that a
/// render may build (a list holding a list is depth 2). Real templates
/// stay below 10; JSON input is held to kMaxJsonDepth, below this.
inline constexpr int kMaxValueDepth = 512;

/// What one render used, filled in whether it finished or failed.
struct RenderStats {
    size_t peak_bytes = 0;  ///< most bytes held at once by the render's values
    size_t made_bytes = 0;  ///< bytes counted over the whole render (made, not held)
    uint64_t steps = 0;     ///< statements, expressions and loop items evaluated
};

/// The byte and time budget of one render, current on the constructing
/// thread until it is destroyed (budgets nest: the previous one is current
/// again afterwards). Not copyable; not shared between threads.
class RenderBudget {
  public:
    /// `max_bytes`: most bytes the render's values may hold at once;
    /// `deadline`: when the render must have finished; `time_limit_ms` is
    /// only for messages.
    RenderBudget(size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                 int64_t time_limit_ms);
    /// Empties the namespaces made during the render (so that a namespace
    /// holding itself is freed), then makes the previous budget current.
    ~RenderBudget();
    RenderBudget(const RenderBudget&) = delete;
    RenderBudget& operator=(const RenderBudget&) = delete;

    /// Counts `bytes` more held. Throws Failure (Kind::Limit, naming the
    /// budget) when the held bytes would pass max_bytes; nothing is counted
    /// then.
    void charge(size_t bytes);
    /// Counts `bytes` as freed (clamped at zero). Never throws.
    void release(size_t bytes) noexcept;
    /// Throws Failure (Kind::Limit) when `bytes` more would not fit. Called
    /// before an operation allocates a result whose size it can tell in
    /// advance (center(1e9) fails before allocating a gigabyte).
    void need(size_t bytes) const;
    /// One unit of work outside the evaluator's steps (printing, comparing
    /// or serializing a value); reads the clock every 256 units and throws
    /// Failure (Kind::Limit) past the deadline.
    void tick();
    /// Throws Failure (Kind::Limit) when the deadline has passed.
    void check_time() const;

    /// Remembers a namespace made during this render, to empty it at the end.
    void adopt(const std::shared_ptr<Namespace>& ns);

    size_t held() const { return held_; }
    size_t peak() const { return peak_; }
    size_t made() const { return made_; }
    size_t max_bytes() const { return max_bytes_; }
    /// A number no other budget in this process has had (never 0).
    uint64_t id() const { return id_; }

    /// The budget of the render running on this thread; nullptr outside one.
    static RenderBudget* current() noexcept;

  private:
    size_t max_bytes_;
    std::chrono::steady_clock::time_point deadline_;
    int64_t time_limit_ms_;
    size_t held_ = 0, peak_ = 0, made_ = 0;
    uint32_t ticks_ = 0;
    uint64_t id_;
    RenderBudget* previous_;
    std::vector<std::weak_ptr<Namespace>> namespaces_;
};

/// Bytes a value holds, counted against the budget that was current when
/// it was made and given back when it is destroyed (or moved out). Copies
/// start uncounted: the owner counts them again (Text) or when it is
/// wrapped in a Value (lists, dicts).
class Held {
  public:
    Held() = default;
    Held(const Held&) noexcept {}
    Held& operator=(const Held&) noexcept { return *this; }
    Held(Held&& o) noexcept : budget_(o.budget_), bytes_(o.bytes_) { o.budget_ = 0, o.bytes_ = 0; }
    Held& operator=(Held&& o) noexcept;
    ~Held() { give_back(); }

    /// Counts `bytes` against the current budget (nothing outside a
    /// render); throws what RenderBudget::charge throws. Replaces what was
    /// held before.
    void take(size_t bytes);
    size_t bytes() const { return bytes_; }

  private:
    void give_back() noexcept;
    uint64_t budget_ = 0;  // RenderBudget::id() of the budget charged, 0 for none
    size_t bytes_ = 0;
};

/// RenderBudget::current()->need(bytes), or nothing outside a render.
void need_bytes(size_t bytes);
/// RenderBudget::current()->tick(), or nothing outside a render.
void tick_work();

}  // namespace wb::chat::jinja
