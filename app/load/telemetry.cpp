#include "load/telemetry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "load/answer_reader.h"

namespace wb::load {

void write_telemetry_csv(const std::string& path, const std::vector<TelemetryRow>& rows,
                         const std::vector<StepSpan>& spans) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error(path + ": cannot write the telemetry CSV file");
    out << telemetry_csv(rows, spans);
    if (!out.flush()) throw std::runtime_error(path + ": writing the telemetry CSV file failed");
}

TelemetryPoller::TelemetryPoller(Target target, double interval_ms)
    : target_(std::move(target)), interval_ms_(interval_ms) {
    // A fetch must not hold a stopping load test for a minute.
    target_.timeout_s = std::min(target_.timeout_s, 10.0);
    target_.connect_timeout_s = std::min(target_.connect_timeout_s, 5.0);
}

TelemetryPoller::~TelemetryPoller() {
    stop();
}

bool TelemetryPoller::fetch(bool skip) {
    // Pages until the server has nothing newer (each answer holds at most
    // its page size; 64 pages bound one round).
    for (int page = 0; page < 64; ++page) {
        const double sent = steady_now_ms();
        // A page is at most 4096 passes of about 70 bytes: 1 MiB bounds a
        // server that answers more (the parse, its memory and its time).
        const GetResult g =
            get_path(target_, "/scheduler/passes?from=" + std::to_string(next_), 1u << 20);
        const double got = steady_now_ms();
        // The answer is checked and parsed before the lock: the GUI's
        // rows() never waits on a 4096-pass parse.
        std::string why;
        PassPage p;
        if (!g.error.empty()) {
            why = g.error;
        } else if (g.status == 404) {
            why =
                "the target does not report scheduler telemetry (GET /scheduler/passes: 404; "
                "workbench-cli serve does)";
        } else if (g.status != 200) {
            why = "GET /scheduler/passes: HTTP " + std::to_string(g.status) + ": " +
                  http_error_text(g.body);
        } else {
            try {
                p = parse_passes(g.body);
            } catch (const std::runtime_error& e) {
                why = e.what();
            }
        }
        std::lock_guard lock(mu_);
        if (!why.empty()) {
            why_ = std::move(why);
            return false;
        }
        // The engine's clock to ours: its now_ms was read between our send
        // and our receipt, so the midpoint is off by at most half the round
        // trip. The fetch with the shortest round trip (the first, before
        // the test loads the server, as a rule) gives the offset every pass
        // is placed with (as NTP picks its best sample).
        const double rtt = got - sent;
        if (rtt < best_rtt_) {
            best_rtt_ = rtt;
            offset_ = (sent + got) / 2 - p.now_ms;
        }
        if (skip) {
            next_ = p.end;
            return true;
        }
        for (const metrics::PassTelemetry& t : p.passes) {
            if (t.index < next_) continue;
            passes_.push_back(t);
        }
        const bool more = p.next > next_ && !p.passes.empty();
        next_ = std::max(next_, p.next);
        if (!more) return true;
    }
    return true;
}

bool TelemetryPoller::start() {
    // What the engine did before the test is not the test's.
    if (!fetch(/*skip=*/true)) return false;
    thread_ = std::thread([this] { loop(); });
    return true;
}

void TelemetryPoller::loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
        cv_.wait_for(lock, std::chrono::duration<double, std::milli>(interval_ms_),
                     [this] { return stop_; });
        if (stop_) break;
        lock.unlock();
        const bool ok = fetch();
        lock.lock();
        if (!ok) return;  // why_ says it; the rows so far stay
    }
}

void TelemetryPoller::stop() {
    {
        std::lock_guard lock(mu_);
        if (stop_) return;
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
        std::string why;
        {
            std::lock_guard lock(mu_);
            why = why_;
        }
        if (why.empty()) fetch();  // the passes of the last half second
    }
}

std::string TelemetryPoller::unavailable() const {
    std::lock_guard lock(mu_);
    return why_;
}

std::vector<TelemetryRow> TelemetryPoller::rows() const {
    std::lock_guard lock(mu_);
    std::vector<TelemetryRow> out;
    out.reserve(passes_.size());
    for (const metrics::PassTelemetry& t : passes_) out.push_back({t.end_ms + offset_, t});
    return out;
}

}  // namespace wb::load
