#pragma once
// Runs one load-test step against a target: open loop (requests sent on an
// arrival schedule whatever the server does, optionally capped in flight) or
// closed loop (N requests kept in flight). One thread per request in
// flight; each request has its own connection.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "load/arrivals.h"
#include "load/client.h"

namespace wb::load {

/// What one step sends.
struct StepPlan {
    /// Open loop: the arrival process and rate (requests/s). Ignored when
    /// concurrency is set.
    Arrival arrival = Arrival::Poisson;
    double rate = 1;
    double burstiness = 1;
    /// Closed loop: requests kept in flight (each client sends its next
    /// request when its last one ends).
    std::optional<int> concurrency;
    /// Open loop: at most this many in flight; a send due while the cap is
    /// reached waits for a slot (its wait counts in its latencies: it is
    /// measured from the due time). nullopt = no cap.
    std::optional<int> max_in_flight;
    size_t requests = 100;             ///< requests in the step (with duration: an upper bound)
    std::optional<double> duration_s;  ///< stop sending after this many seconds
    size_t warmup = 0;                 ///< sent first, one at a time, not in the results
    uint64_t seed = 0;                 ///< arrival schedule seed
    /// Stop flag a front end sets (Stop button, window close); nullptr =
    /// none. Once true, no further request is sent (an open loop's wait
    /// for the next due time ends within 50 ms); requests in flight run to
    /// their end (bounded by the target's timeout) and the step returns
    /// the requests that were sent.
    const std::atomic<bool>* cancel = nullptr;
};

/// The OpenAI "user" field of request `i` of step `step` of run `run_id`
/// (0: not logged): "wb-load-<run>-<step>-<i>", "-w<i>" for a warm-up
/// request. A server that logs the field (ours does) lets its rows be
/// matched to the client's (docs/load.md).
std::string request_user(int64_t run_id, size_t step, bool warmup, size_t i);

/// Builds request `i` of the step (warm-up requests get i = 0..warmup-1
/// with `warmup` true).
using MakeRequest = std::function<RequestSpec(size_t i, bool warmup)>;
/// Called from the request's thread as each request ends (warm-up too).
/// Must be thread-safe.
using OnResult =
    std::function<void(size_t i, bool warmup, const RequestSpec&, const RequestResult&)>;

/// Runs `plan` and returns the results of the non-warm-up requests, in
/// send order (only those sent when plan.cancel stopped the step); send_ms is relative to the
/// step's first send. Throws std::invalid_argument for a plan with a rate <= 0, concurrency < 1 or
/// max_in_flight < 1, and what send_request() throws for a bad URL.
std::vector<RequestResult> run_step(const Target& target, const StepPlan& plan,
                                    const MakeRequest& make, const OnResult& on_result,
                                    const TokenCounter& count);

}  // namespace wb::load
