#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "load/telemetry.h"

// The pure half of telemetry.h: the answer's parser, the per-step sums and
// the CSV (no network; the fuzzer tests/fuzz/fuzz_answer.cpp feeds the
// parser hostile bytes).

namespace wb::load {

namespace {

using json = nlohmann::json;

// The columns passes_json writes, in its order; the parser checks them so
// that a server with another layout is refused instead of misread.
constexpr const char* kColumns[] = {
    "index",         "end_ms", "duration_ms",    "batch",           "prefill_tokens",
    "decode_tokens", "queued", "kv_blocks_used", "kv_blocks_total", "preemptions"};

// Passes one answer may hold: the server's page is 4096; a little room for
// another build's larger page, never an unbounded list.
constexpr size_t kMaxPassesPerPage = 16384;

[[noreturn]] void bad(const std::string& what) {
    throw std::runtime_error("scheduler telemetry: " + what);
}

uint64_t whole(const json& v, const std::string& where) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0)
        return static_cast<uint64_t>(v.get<int64_t>());
    bad(where + " is not a whole number >= 0");
}

uint32_t small(const json& v, const std::string& where) {
    const uint64_t x = whole(v, where);
    if (x > std::numeric_limits<uint32_t>::max()) bad(where + " is too large");
    return static_cast<uint32_t>(x);
}

double finite(const json& v, const std::string& where) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) bad(where + " is not a finite number");
    return v.get<double>();
}

std::string fixed(double v, int decimals) {
    char b[48];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}

}  // namespace

PassPage parse_passes(std::string_view body) {
    const json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) bad("the answer is not a JSON object");
    const auto cols = j.find("columns");
    if (cols == j.end() || !cols->is_array() || cols->size() != std::size(kColumns)) {
        bad("'columns' is not the " + std::to_string(std::size(kColumns)) + " known columns");
    }
    for (size_t c = 0; c < std::size(kColumns); ++c) {
        if (!(*cols)[c].is_string() || (*cols)[c].get<std::string>() != kColumns[c])
            bad("column " + std::to_string(c) + " is not '" + kColumns[c] + "'");
    }
    PassPage p;
    const auto now = j.find("now_ms");
    if (now == j.end()) bad("'now_ms' is missing");
    p.now_ms = finite(*now, "'now_ms'");
    const auto next = j.find("next");
    if (next == j.end()) bad("'next' is missing");
    p.next = whole(*next, "'next'");
    const auto end = j.find("end");
    if (end == j.end()) bad("'end' is missing");
    p.end = whole(*end, "'end'");
    const auto rows = j.find("passes");
    if (rows == j.end() || !rows->is_array()) bad("'passes' is not an array");
    if (rows->size() > kMaxPassesPerPage)
        bad("the answer holds " + std::to_string(rows->size()) + " passes; a page holds at most " +
            std::to_string(kMaxPassesPerPage));
    p.passes.reserve(rows->size());
    for (size_t i = 0; i < rows->size(); ++i) {
        const json& r = (*rows)[i];
        const std::string at = "pass " + std::to_string(i);
        if (!r.is_array() || r.size() != std::size(kColumns))
            bad(at + " is not an array of " + std::to_string(std::size(kColumns)) + " values");
        metrics::PassTelemetry t;
        t.index = whole(r[0], at + ": 'index'");
        t.end_ms = finite(r[1], at + ": 'end_ms'");
        t.duration_ms = finite(r[2], at + ": 'duration_ms'");
        t.batch = small(r[3], at + ": 'batch'");
        t.prefill_tokens = small(r[4], at + ": 'prefill_tokens'");
        t.decode_tokens = small(r[5], at + ": 'decode_tokens'");
        t.queued = static_cast<int32_t>(std::min<uint32_t>(small(r[6], at + ": 'queued'"),
                                                           std::numeric_limits<int32_t>::max()));
        t.kv_blocks_used = small(r[7], at + ": 'kv_blocks_used'");
        t.kv_blocks_total = small(r[8], at + ": 'kv_blocks_total'");
        t.preemptions = small(r[9], at + ": 'preemptions'");
        if (!p.passes.empty() && t.index <= p.passes.back().index)
            bad(at + ": index " + std::to_string(t.index) + " is not after the one before");
        p.passes.push_back(t);
    }
    if (!p.passes.empty() && p.next <= p.passes.back().index)
        bad("'next' is not after the last pass");
    return p;
}

SchedulerStats scheduler_stats(const std::vector<TelemetryRow>& rows, double begin_ms,
                               double end_ms) {
    SchedulerStats s;
    double batch_sum = 0;
    for (const TelemetryRow& r : rows) {
        if (!(r.t_ms >= begin_ms && r.t_ms <= end_ms)) continue;
        const metrics::PassTelemetry& p = r.pass;
        ++s.passes;
        batch_sum += p.batch;
        s.batch_max = std::max(s.batch_max, p.batch);
        s.prefill_tokens += p.prefill_tokens;
        s.decode_tokens += p.decode_tokens;
        s.kv_blocks_used_max = std::max(s.kv_blocks_used_max, p.kv_blocks_used);
        s.kv_blocks_total = std::max(s.kv_blocks_total, p.kv_blocks_total);
        s.preemptions += p.preemptions;
        s.busy_ms += p.duration_ms;
    }
    s.batch_mean = s.passes ? batch_sum / static_cast<double>(s.passes)
                            : std::numeric_limits<double>::quiet_NaN();
    return s;
}

std::string telemetry_csv(const std::vector<TelemetryRow>& rows,
                          const std::vector<StepSpan>& spans) {
    std::string out =
        "step,t_s,index,duration_ms,batch,prefill_tokens,decode_tokens,queued,kv_blocks_used,"
        "kv_blocks_free,preemptions\n";
    const double t0 = rows.empty() ? 0 : rows.front().t_ms;
    for (const TelemetryRow& r : rows) {
        std::string label;
        for (const StepSpan& s : spans) {
            if (r.t_ms >= s.begin_ms && r.t_ms <= s.end_ms) {
                label = s.label;
                break;
            }
        }
        const metrics::PassTelemetry& p = r.pass;
        const uint32_t free_blocks =
            p.kv_blocks_total >= p.kv_blocks_used ? p.kv_blocks_total - p.kv_blocks_used : 0;
        const std::string fields[] = {label,
                                      fixed((r.t_ms - t0) / 1000.0, 6),
                                      std::to_string(p.index),
                                      fixed(p.duration_ms, 3),
                                      std::to_string(p.batch),
                                      std::to_string(p.prefill_tokens),
                                      std::to_string(p.decode_tokens),
                                      std::to_string(p.queued),
                                      std::to_string(p.kv_blocks_used),
                                      std::to_string(free_blocks),
                                      std::to_string(p.preemptions)};
        for (size_t i = 0; i < std::size(fields); ++i) {
            if (i) out += ',';
            out += fields[i];
        }
        out += '\n';
    }
    return out;
}

}  // namespace wb::load
