#include "load/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace wb::load {

using json = nlohmann::json;

namespace {

std::string fixed6(double v) {
    if (!std::isfinite(v)) return {};
    char b[48];
    std::snprintf(b, sizeof b, "%.6f", v);
    return b;
}

// Costs can be tiny per request (1e-5 USD): significant digits, not decimals.
std::string sig8(double v) {
    if (!std::isfinite(v)) return {};
    char b[48];
    std::snprintf(b, sizeof b, "%.8g", v);
    return b;
}

json opt(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

json summary_json(const metrics::Summary& s) {
    const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    return {{"count", s.count},  {"mean", num(s.mean)}, {"p50", num(s.p50)}, {"p90", num(s.p90)},
            {"p95", num(s.p95)}, {"p99", num(s.p99)},   {"max", num(s.max)}};
}

json step_json(const SweepStep& st, const ErrorReasons& reasons) {
    const StepStats& s = st.stats;
    json j = {{"label", st.label},
              {"offered_rate", opt(s.offered_rate)},
              {"concurrency", s.concurrency ? json(*s.concurrency) : json(nullptr)},
              {"requests", s.requests},
              {"completed", s.completed},
              {"errors", s.errors},
              {"timeouts", s.timeouts},
              {"duration_s", s.duration_s},
              {"achieved_rate", s.achieved_rate},
              {"request_throughput", s.request_throughput},
              {"output_throughput", s.output_throughput},
              {"input_throughput", s.input_throughput},
              {"goodput", s.goodput},
              {"meets_slo", s.meets_slo},
              {"output_tokens_approximate", s.output_tokens_approximate},
              {"ttft_ms", summary_json(s.ttft)},
              {"itl_ms", summary_json(s.itl)},
              {"tpot_ms", summary_json(s.tpot)},
              {"e2e_ms", summary_json(s.e2e)},
              {"queue_wait_ms", summary_json(s.queue_wait)}};
    j["error_reasons"] = reasons;
    return j;
}

json report_json(const Report& r) {
    json out = {{"target", r.target}, {"model", r.model}, {"api", r.api}};
    json arr = json::array();
    for (size_t i = 0; i < r.steps.size(); ++i) {
        json st = step_json(r.steps[i], i < r.reasons.size() ? r.reasons[i] : ErrorReasons{});
        if (r.price) st["cost"] = cost::to_json(step_cost(r.steps[i].stats, *r.price));
        if (i < r.scheduler.size()) st["scheduler"] = scheduler_json(r.scheduler[i]);
        arr.push_back(std::move(st));
    }
    out["steps"] = std::move(arr);
    out["best_step"] = r.best >= 0 ? json(r.best) : json(nullptr);
    out["slo"] = {{"ttft_p99_ms", opt(r.slo.ttft_p99_ms)},
                  {"itl_p99_ms", opt(r.slo.itl_p99_ms)},
                  {"e2e_p99_ms", opt(r.slo.e2e_p99_ms)}};
    out["run_id"] = r.run_id ? json(*r.run_id) : json(nullptr);
    out["db"] = r.db ? json(*r.db) : json(nullptr);
    out["price"] = r.price ? cost::to_json(*r.price) : json(nullptr);
    out["telemetry"] = {
        {"available", !r.scheduler.empty()},
        {"reason",
         r.telemetry_unavailable.empty() ? json(nullptr) : json(r.telemetry_unavailable)}};
    return out;
}

json scheduler_json(const SchedulerStats& s) {
    return {{"passes", s.passes},
            {"batch_mean", std::isfinite(s.batch_mean) ? json(s.batch_mean) : json(nullptr)},
            {"batch_max", s.batch_max},
            {"prefill_tokens", s.prefill_tokens},
            {"decode_tokens", s.decode_tokens},
            {"kv_blocks_used_max", s.kv_blocks_used_max},
            {"kv_blocks_total", s.kv_blocks_total},
            {"preemptions", s.preemptions},
            {"busy_ms", s.busy_ms}};
}

cost::Figures step_cost(const StepStats& s, const cost::Price& price) {
    cost::Usage u;
    u.requests = static_cast<double>(s.completed);
    u.input_tokens = s.input_throughput * s.duration_s;
    u.output_tokens = s.output_throughput * s.duration_s;
    u.seconds = s.duration_s;
    u.seconds_kind = "the step's wall time";
    return cost::figures(price, u);
}

std::string steps_csv(const std::vector<SweepStep>& steps,
                      const std::optional<cost::Price>& price) {
    static const char* const kHead[] = {"step",
                                        "offered_rate",
                                        "concurrency",
                                        "requests",
                                        "completed",
                                        "errors",
                                        "timeouts",
                                        "duration_s",
                                        "achieved_rate",
                                        "request_throughput",
                                        "output_throughput",
                                        "input_throughput",
                                        "goodput",
                                        "meets_slo",
                                        "ttft_p50_ms",
                                        "ttft_p90_ms",
                                        "ttft_p95_ms",
                                        "ttft_p99_ms",
                                        "itl_p50_ms",
                                        "itl_p90_ms",
                                        "itl_p95_ms",
                                        "itl_p99_ms",
                                        "tpot_p50_ms",
                                        "tpot_p90_ms",
                                        "tpot_p95_ms",
                                        "tpot_p99_ms",
                                        "e2e_p50_ms",
                                        "e2e_p90_ms",
                                        "e2e_p95_ms",
                                        "e2e_p99_ms",
                                        "queue_wait_p50_ms",
                                        "queue_wait_p90_ms",
                                        "queue_wait_p95_ms",
                                        "queue_wait_p99_ms"};
    std::string out;
    // Separator and field appended apart: GCC 12 warns (-Wrestrict, bug
    // 105329) on `"," + field` temporaries.
    for (size_t i = 0; i < std::size(kHead); ++i) {
        if (i) out += ',';
        out += kHead[i];
    }
    if (price) out += ",cost_total,cost_per_request,cost_per_1k_requests,cost_per_m_output_tokens";
    out += "\n";
    for (const auto& st : steps) {
        const StepStats& s = st.stats;
        std::vector<std::string> f = {st.label,
                                      s.offered_rate ? fixed6(*s.offered_rate) : "",
                                      s.concurrency ? std::to_string(*s.concurrency) : "",
                                      std::to_string(s.requests),
                                      std::to_string(s.completed),
                                      std::to_string(s.errors),
                                      std::to_string(s.timeouts),
                                      fixed6(s.duration_s),
                                      fixed6(s.achieved_rate),
                                      fixed6(s.request_throughput),
                                      fixed6(s.output_throughput),
                                      fixed6(s.input_throughput),
                                      fixed6(s.goodput),
                                      s.meets_slo ? "1" : "0"};
        for (const metrics::Summary* m : {&s.ttft, &s.itl, &s.tpot, &s.e2e, &s.queue_wait}) {
            for (const double v : {m->p50, m->p90, m->p95, m->p99}) f.push_back(fixed6(v));
        }
        if (price) {
            const cost::Figures c = step_cost(s, *price);
            for (const double v :
                 {c.total, c.per_request, c.per_1k_requests, c.per_m_output_tokens})
                f.push_back(sig8(v));
        }
        for (size_t i = 0; i < f.size(); ++i) {
            if (i) out += ',';
            out += f[i];
        }
        out += "\n";
    }
    return out;
}

std::vector<SweepStep> compared_steps(const std::vector<SweepStep>& a,
                                      const std::vector<SweepStep>& b) {
    std::vector<SweepStep> out;
    for (SweepStep st : a) {
        st.label = "A: " + st.label;
        out.push_back(std::move(st));
    }
    for (SweepStep st : b) {
        st.label = "B: " + st.label;
        out.push_back(std::move(st));
    }
    return out;
}

void write_csv(const std::string& path, const std::vector<SweepStep>& steps,
               const std::optional<cost::Price>& price) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error(path + ": cannot write the CSV file");
    out << steps_csv(steps, price);
    if (!out.flush()) throw std::runtime_error(path + ": writing the CSV file failed");
}

}  // namespace wb::load
