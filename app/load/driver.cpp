#include "load/driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace wb::load {
namespace {

// Counting slots for the in-flight cap.
class Slots {
  public:
    explicit Slots(int n) : free_(n) {}
    void acquire() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return free_ > 0; });
        --free_;
    }
    void release() {
        {
            std::lock_guard lock(mu_);
            ++free_;
        }
        cv_.notify_one();
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    int free_;
};

// send_request() for a request thread: anything thrown (out of memory, a
// prompt builder's error) becomes this request's error, never
// std::terminate in a thread.
RequestResult send_safely(const Target& target, const RequestSpec& spec, double epoch_ms,
                          const TokenCounter& count) {
    try {
        return send_request(target, spec, epoch_ms, count);
    } catch (const std::exception& e) {
        RequestResult r;
        r.send_ms = steady_now_ms() - epoch_ms;
        r.e2e_ms = 0;
        r.error = std::string("the client failed: ") + e.what();
        return r;
    }
}

// Sleeps until `t_ms` in slices of at most 50 ms so a stop flag is seen
// soon; false when `cancel` was set.
bool sleep_until_ms(double t_ms, const std::atomic<bool>* cancel) {
    for (;;) {
        if (cancel && cancel->load()) return false;
        const double left = t_ms - steady_now_ms();
        if (left <= 0) return true;
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(std::min(left, 50.0)));
    }
}

bool cancelled(const StepPlan& plan) {
    return plan.cancel && plan.cancel->load();
}

}  // namespace

std::string request_user(int64_t run_id, size_t step, bool warmup, size_t i) {
    return "wb-load-" + std::to_string(run_id) + "-" + std::to_string(step) +
           (warmup ? "-w" : "-") + std::to_string(i);
}

std::vector<RequestResult> run_step(const Target& target, const StepPlan& plan,
                                    const MakeRequest& make, const OnResult& on_result,
                                    const TokenCounter& count) {
    check_base_url(target.base_url);
    if (plan.concurrency && *plan.concurrency < 1) {
        throw std::invalid_argument("concurrency must be >= 1");
    }
    if (plan.max_in_flight && *plan.max_in_flight < 1) {
        throw std::invalid_argument("max in flight must be >= 1");
    }
    const auto report = [&](size_t i, bool warm, const RequestSpec& s, const RequestResult& r) {
        if (on_result) on_result(i, warm, s, r);
    };
    for (size_t i = 0; i < plan.warmup && !cancelled(plan); ++i) {
        const RequestSpec s = make(i, true);
        report(i, true, s, send_safely(target, s, steady_now_ms(), count));
    }

    std::vector<RequestResult> results;
    std::mutex mu;
    const double t0 = steady_now_ms();
    const double end_ms =
        plan.duration_s ? t0 + *plan.duration_s * 1000.0 : std::numeric_limits<double>::infinity();

    if (plan.concurrency) {
        std::atomic<size_t> next{0};
        std::vector<std::pair<size_t, RequestResult>> done;
        std::vector<std::thread> workers;
        for (int w = 0; w < *plan.concurrency; ++w) {
            workers.emplace_back([&] {
                for (;;) {
                    const size_t i = next.fetch_add(1);
                    if (i >= plan.requests || steady_now_ms() >= end_ms || cancelled(plan)) return;
                    const RequestSpec s = make(i, false);
                    RequestResult r = send_safely(target, s, t0, count);
                    report(i, false, s, r);
                    std::lock_guard lock(mu);
                    done.emplace_back(i, std::move(r));
                }
            });
        }
        for (std::thread& t : workers) t.join();
        std::sort(done.begin(), done.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& d : done) results.push_back(std::move(d.second));
        return results;
    }

    size_t n = plan.requests;
    if (plan.duration_s) {
        // Enough requests to fill the duration at the offered rate.
        n = std::min(n, static_cast<size_t>(std::floor(*plan.duration_s * plan.rate)) + 1);
    }
    const std::vector<double> when =
        arrival_schedule(plan.arrival, plan.rate, plan.burstiness, plan.seed, n);
    results.resize(n);
    std::optional<Slots> slots;
    if (plan.max_in_flight) slots.emplace(*plan.max_in_flight);
    // Threads that ended are joined as new ones start, so a long step holds
    // only about as many threads as requests in flight.
    struct Running {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::list<Running> running;
    const auto reap = [&running] {
        for (auto it = running.begin(); it != running.end();) {
            if (it->done->load()) {
                it->thread.join();
                it = running.erase(it);
            } else {
                ++it;
            }
        }
    };
    size_t sent = 0;
    for (size_t i = 0; i < n; ++i) {
        const double due = t0 + when[i] * 1000.0;
        if (!sleep_until_ms(due, plan.cancel)) break;
        if (slots) slots->acquire();
        reap();
        auto done = std::make_shared<std::atomic<bool>>(false);
        try {
            running.push_back({std::thread([&, i, due, done] {
                                   const RequestSpec s = make(i, false);
                                   RequestResult r = send_safely(target, s, t0, count);
                                   // Latency counts from the due time: a send
                                   // delayed by the cap waited in the client's queue.
                                   const double late = r.send_ms - (due - t0);
                                   if (late > 0) {
                                       if (r.ttft_ms) *r.ttft_ms += late;
                                       if (r.e2e_ms) *r.e2e_ms += late;
                                       r.client_wait_ms = late;
                                   }
                                   if (slots) slots->release();
                                   report(i, false, s, r);
                                   results[i] = std::move(r);
                                   done->store(true);
                               }),
                               done});
        } catch (const std::system_error& e) {
            // The system refused another thread (too many in flight): this
            // request fails with the reason, the step goes on.
            if (slots) slots->release();
            RequestResult r;
            r.send_ms = due - t0;
            r.e2e_ms = 0;
            r.error = std::string("could not start a client thread: ") + e.what();
            const RequestSpec s = make(i, false);
            report(i, false, s, r);
            results[i] = std::move(r);
        }
        sent = i + 1;
    }
    for (Running& r : running) r.thread.join();
    results.resize(sent);  // a stopped step: only the requests sent
    return results;
}

}  // namespace wb::load
