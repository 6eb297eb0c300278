#include "runlog/run_diff.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "runlog/history.h"
#include "runlog/row_scan.h"
#include "runlog/sqlite_db.h"
#include "runlog/utf8.h"

namespace wb::runlog {

namespace {

constexpr const char* kNone = "(none)";

// The tags the diff knows, in the order it lists them within a group. Keys
// of responses.settings (core/settings_json.h) are looked up by their JSON
// name; "model.*", "engine.*" and "environment.*" are table columns.
struct Tag {
    const char* source;  // settings key or column tag
    const char* group;
    const char* label;
    bool changes_outputs;
};

constexpr Tag kTags[] = {
    {"model.sha256", "model", "file SHA-256", true},
    {"model.file_type", "model", "file type (quantization)", true},
    {"model.tensor_types", "model", "tensor types", true},
    {"model.architecture", "model", "architecture", true},
    {"model.n_params", "model", "parameters", true},
    {"model.context_length", "model", "trained context (tokens)", true},
    {"model.file_size", "model", "file size (bytes)", true},
    {"model.name", "model", "model name", false},
    {"model.tokenizer_model", "tokenizer", "tokenizer model", true},
    {"pre_tokenizer", "tokenizer", "pre-tokenizer", true},
    {"add_bos", "tokenizer", "add BOS", true},
    {"parse_special", "tokenizer", "parse special tokens", true},
    {"prompt_mode", "tokenizer", "prompt mode", true},
    {"chat_template", "tokenizer", "chat template", true},
    {"chat_template_sha256", "tokenizer", "chat template SHA-256", true},
    {"system_prompt", "tokenizer", "system prompt", true},
    {"temperature", "sampling", "temperature", true},
    {"top_k", "sampling", "top-k", true},
    {"top_p", "sampling", "top-p", true},
    {"min_p", "sampling", "min-p", true},
    {"repeat_penalty", "sampling", "repeat penalty", true},
    {"repeat_last_n", "sampling", "repeat last n", true},
    {"seed_policy", "sampling", "seed policy", true},
    {"seed", "sampling", "seed", true},
    {"max_tokens", "sampling", "max tokens", true},
    {"stop", "sampling", "stop strings", true},
    {"ignore_eos", "sampling", "ignore EOS", true},
    // The numerics: another KV precision or backend rounds differently, so
    // a greedy output may change too.
    {"kv_type", "run", "KV cache type", true},
    {"environment.backend", "environment", "backend", true},
    {"n_ctx", "run", "context (n_ctx, tokens)", false},
    {"n_parallel", "run", "parallel sequences", false},
    {"prefill_chunk", "run", "prefill chunk (tokens)", false},
    {"step_tokens", "run", "step budget (tokens)", false},
    {"concurrency", "run", "concurrency", false},
    {"max_queue", "run", "queue bound", false},
    {"queue_timeout_ms", "run", "queue timeout (ms)", false},
    {"timeout_ms", "run", "timeout (ms)", false},
    {"top_logprobs", "run", "top logprobs", false},
    {"run.kind", "run", "run kind", false},
    {"engine.app_version", "engine", "app version", false},
    {"engine.git_commit", "engine", "git commit", false},
    {"environment.vk_device_name", "environment", "device", false},
    {"environment.vk_device_type", "environment", "device type", false},
    {"environment.vk_driver_name", "environment", "driver", false},
    {"environment.vk_driver_version", "environment", "driver version", false},
    {"environment.vk_api_version", "environment", "Vulkan API version", false},
    {"environment.os", "environment", "OS", false},
    {"environment.kernel", "environment", "kernel", false},
    {"environment.cpu", "environment", "CPU", false},
};

// The settings key "backend" repeats the environment row's backend.
constexpr const char* kSkippedSettings[] = {"backend"};

int group_rank(const std::string& g) {
    static const char* kOrder[] = {"model", "tokenizer", "sampling",
                                   "run",   "engine",    "environment"};
    for (int i = 0; i < 6; ++i)
        if (g == kOrder[i]) return i;
    return 6;
}

// Column tags of the response query, in its SELECT order from column 8.
constexpr const char* kColumnTags[] = {
    "model.sha256",
    "model.file_type",
    "model.tensor_types",
    "model.architecture",
    "model.n_params",
    "model.context_length",
    "model.file_size",
    "model.name",
    "model.tokenizer_model",
    "engine.app_version",
    "engine.git_commit",
    "environment.os",
    "environment.kernel",
    "environment.cpu",
    "environment.backend",
    "environment.vk_device_name",
    "environment.vk_device_type",
    "environment.vk_driver_name",
    "environment.vk_driver_version",
    "environment.vk_api_version",
};

constexpr const char* kResponseSql =
    "SELECT r.id, r.settings, r.prompt, r.prompt_sha256, r.output, r.output_sha256, r.ttft_ms, "
    "r.e2e_ms, m.sha256, COALESCE(NULLIF(m.file_type_name, ''), CAST(m.file_type AS TEXT)), "
    "m.tensor_types, m.architecture, CAST(m.n_params AS TEXT), CAST(m.context_length AS TEXT), "
    "CAST(m.file_size AS TEXT), m.name, m.tokenizer_model, e.app_version, e.git_commit, e.os, "
    "e.kernel, e.cpu, e.backend, e.vk_device_name, e.vk_device_type, e.vk_driver_name, "
    "e.vk_driver_version, e.vk_api_version"
    " FROM responses r JOIN model_versions m ON m.id = r.model_version_id"
    " JOIN environments e ON e.id = r.environment_id WHERE r.run_id = ?1 ORDER BY r.id";

struct Response {
    int64_t id = 0;
    std::map<std::string, std::string> tags;  // column tags and settings keys
    std::optional<std::string> prompt, output;
    std::string prompt_sha256, output_sha256;
    std::optional<double> ttft_ms, e2e_ms;
};

struct RunData {
    RunHeader header;
    std::map<std::string, std::string> run_settings;
    std::vector<Response> responses;
};

std::string render(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Flattens a settings text into key -> value text; a text that is not a
// JSON object gives a warning and no keys.
std::map<std::string, std::string> settings_map(std::string_view text, const std::string& where,
                                                std::vector<std::string>& warnings) {
    std::map<std::string, std::string> out;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) {
        warnings.push_back(where + ": settings are not a JSON object, left out");
        return out;
    }
    for (const auto& [k, v] : j.items()) {
        if (std::find(std::begin(kSkippedSettings), std::end(kSkippedSettings), k) !=
            std::end(kSkippedSettings))
            continue;
        out[k] = render(v);
    }
    return out;
}

std::optional<std::string> opt_text(const Stmt& st, int col) {
    if (st.is_null(col)) return std::nullopt;
    return std::string(st.text(col));
}

std::optional<double> opt_real(const Stmt& st, int col) {
    if (st.is_null(col)) return std::nullopt;
    return st.real(col);
}

RunData read_run(const Db& db, int64_t id, std::vector<std::string>& warnings) {
    RunData run;
    {
        Stmt st(db, "SELECT id, kind, name, started_ms, settings FROM runs WHERE id = ?1");
        st.bind(1, id);
        if (!st.step())
            throw RunNotFound(id, "run " + std::to_string(id) + " is not in the run log " +
                                      db.path() + " (`workbench-cli export` lists the runs)");
        run.header = {st.int64(0), std::string(st.text(1)), std::string(st.text(2)), st.int64(3)};
        run.run_settings = settings_map(st.text(4), "run " + std::to_string(id), warnings);
    }
    try {
        Stmt st(db, kResponseSql);
        st.bind(1, id);
        while (st.step()) {
            Response r;
            r.id = st.int64(0);
            r.tags = settings_map(st.text(1), "response " + std::to_string(r.id), warnings);
            r.prompt = opt_text(st, 2);
            r.prompt_sha256 = std::string(st.text(3));
            r.output = opt_text(st, 4);
            r.output_sha256 = std::string(st.text(5));
            r.ttft_ms = opt_real(st, 6);
            r.e2e_ms = opt_real(st, 7);
            for (int c = 0; c < static_cast<int>(std::size(kColumnTags)); ++c)
                r.tags[kColumnTags[c]] = st.is_null(8 + c) ? kNone : std::string(st.text(8 + c));
            r.tags["run.kind"] = run.header.kind;
            run.responses.push_back(std::move(r));
        }
    } catch (const DbError& e) {
        // A damaged page: report the responses read before it.
        if (!is_damage(e)) throw;
        warnings.push_back("run " + std::to_string(id) + ": responses after " +
                           std::to_string(run.responses.size()) +
                           " could not be read (the log is damaged: " + e.what() +
                           "); `workbench-cli log salvage` copies out what is readable");
    }
    return run;
}

// The values run `r` has for `key`: its responses' (those without the key
// count as "(none)"), else its run settings', else none.
FieldValues values_of(const RunData& r, const std::string& key) {
    FieldValues f;
    auto add = [&f](const std::string& v) {
        if (std::find(f.values.begin(), f.values.end(), v) == f.values.end()) f.values.push_back(v);
    };
    const bool any = std::any_of(r.responses.begin(), r.responses.end(),
                                 [&](const Response& x) { return x.tags.count(key) > 0; });
    if (any) {
        for (const Response& x : r.responses) {
            auto it = x.tags.find(key);
            add(it == x.tags.end() ? kNone : it->second);
        }
        return f;
    }
    if (key == "run.kind") {
        add(r.header.kind);
        return f;
    }
    auto it = r.run_settings.find(key);
    if (it != r.run_settings.end()) {
        add(it->second);
        return f;
    }
    // A key only the other run has: absent here, unless there is nothing
    // here at all (a run without responses has no model or environment).
    if (key.find('.') == std::string::npos || !r.responses.empty()) add(kNone);
    return f;
}

bool same_set(std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

std::optional<double> median(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::optional<double> mean(const std::vector<double>& v) {
    if (v.empty()) return std::nullopt;
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}

// Byte index of code point `cp` of `s` (s.size() past the end).
size_t byte_of(std::string_view s, size_t cp) {
    size_t i = 0;
    for (size_t n = 0; n < cp && i < s.size(); ++n)
        i += std::max<size_t>(1, utf8_sequence_length(s, i));
    return std::min(i, s.size());
}

// Up to `n` code points of `s` from code point `from`, newlines as spaces,
// invalid bytes as U+FFFD.
std::string excerpt(std::string_view s, size_t from, size_t n) {
    const size_t b = byte_of(s, from);
    const size_t e = b + byte_of(s.substr(b), n);
    std::string out = to_valid_utf8(s.substr(b, e - b));
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
}

LatencyDelta latency(const std::vector<std::pair<const Response*, const Response*>>& pairs,
                     std::optional<double> Response::*field) {
    std::vector<double> a, b;
    for (const auto& [x, y] : pairs) {
        if (!(x->*field) || !(y->*field)) continue;
        a.push_back(*(x->*field));
        b.push_back(*(y->*field));
    }
    LatencyDelta d;
    d.pairs = a.size();
    d.a_p50 = median(a);
    d.b_p50 = median(b);
    d.a_mean = mean(a);
    d.b_mean = mean(b);
    return d;
}

PromptComparison compare_prompts(const RunData& a, const RunData& b) {
    PromptComparison pc;
    pc.a_responses = a.responses.size();
    pc.b_responses = b.responses.size();
    std::unordered_map<std::string, std::deque<const Response*>> in_b;
    for (const Response& r : b.responses) in_b[r.prompt_sha256].push_back(&r);
    std::vector<std::pair<const Response*, const Response*>> pairs;
    for (const Response& r : a.responses) {
        auto it = in_b.find(r.prompt_sha256);
        if (it == in_b.end() || it->second.empty()) continue;
        pairs.emplace_back(&r, it->second.front());
        it->second.pop_front();
    }
    pc.matched = pairs.size();
    for (const auto& [x, y] : pairs) {
        if (x->output_sha256 == y->output_sha256) {
            ++pc.identical;
            continue;
        }
        Divergence d;
        d.prompt_sha256 = x->prompt_sha256;
        d.prompt_excerpt = x->prompt ? excerpt(*x->prompt, 0, 40) : "";
        d.a_response = x->id;
        d.b_response = y->id;
        if (x->output && y->output) {
            d.offset = first_divergence(*x->output, *y->output);
            if (d.offset) {
                d.a_excerpt = excerpt(*x->output, *d.offset, 32);
                d.b_excerpt = excerpt(*y->output, *d.offset, 32);
            }
        }
        pc.divergences.push_back(std::move(d));
    }
    pc.ttft = latency(pairs, &Response::ttft_ms);
    pc.e2e = latency(pairs, &Response::e2e_ms);
    return pc;
}

// True when every response of both runs sampled greedily (temperature 0):
// the sampler then takes the argmax of the penalised logits, so top-k,
// top-p, min-p and the seed are not used (engine/sampling/sampler.cpp).
bool all_greedy(const RunData& a, const RunData& b) {
    for (const RunData* r : {&a, &b}) {
        const FieldValues t = values_of(*r, "temperature");
        if (t.values.empty()) return false;
        for (const std::string& v : t.values) {
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end != '\0' || x > 0) return false;
        }
    }
    return true;
}

constexpr const char* kUnusedWhenGreedy[] = {"top_k", "top_p", "min_p", "seed", "seed_policy"};

std::vector<FieldDiff> compare_fields(const RunData& a, const RunData& b) {
    const bool greedy = all_greedy(a, b);
    std::set<std::string> keys;
    for (const RunData* r : {&a, &b}) {
        for (const Response& x : r->responses)
            for (const auto& kv : x.tags) keys.insert(kv.first);
        for (const auto& kv : r->run_settings) keys.insert(kv.first);
    }
    keys.insert("run.kind");
    std::vector<std::pair<size_t, FieldDiff>> rows;  // (catalog position, row)
    for (const std::string& key : keys) {
        FieldDiff f;
        f.a = values_of(a, key);
        f.b = values_of(b, key);
        if (same_set(f.a.values, f.b.values)) continue;
        size_t pos = std::size(kTags);
        for (size_t i = 0; i < std::size(kTags); ++i)
            if (key == kTags[i].source) pos = i;
        if (pos < std::size(kTags)) {
            const Tag& t = kTags[pos];
            f.group = t.group;
            f.label = t.label;
            f.changes_outputs = t.changes_outputs;
            if (greedy && std::find_if(std::begin(kUnusedWhenGreedy), std::end(kUnusedWhenGreedy),
                                       [&](const char* k) { return key == k; }) !=
                              std::end(kUnusedWhenGreedy)) {
                f.changes_outputs = false;
                f.label += " (not used: greedy)";
            }
        } else {
            // A setting this build does not know (a newer writer): listed
            // under the run's settings by its own name.
            f.group = "run";
            f.label = key;
        }
        const size_t dot = key.find('.');
        f.key = f.group + "." + (dot == std::string::npos ? key : key.substr(dot + 1));
        rows.emplace_back(pos, std::move(f));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
        if (x.second.changes_outputs != y.second.changes_outputs) return x.second.changes_outputs;
        const int gx = group_rank(x.second.group), gy = group_rank(y.second.group);
        if (gx != gy) return gx < gy;
        return x.first < y.first;  // keys arrive sorted, so unknown ones stay by name
    });
    std::vector<FieldDiff> out;
    for (auto& r : rows) out.push_back(std::move(r.second));
    return out;
}

nlohmann::json opt_json(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json latency_json(const LatencyDelta& d) {
    return {{"pairs", d.pairs},
            {"a_p50", opt_json(d.a_p50)},
            {"b_p50", opt_json(d.b_p50)},
            {"p50_delta", opt_json(d.p50_delta())},
            {"a_mean", opt_json(d.a_mean)},
            {"b_mean", opt_json(d.b_mean)},
            {"mean_delta", opt_json(d.mean_delta())}};
}

nlohmann::json header_json(const RunHeader& h) {
    return {{"id", h.id}, {"kind", h.kind}, {"name", h.name}, {"started_ms", h.started_ms}};
}

}  // namespace

std::string FieldValues::text() const {
    if (values.empty()) return "";
    if (values.size() == 1) return values[0];
    std::string s = "mixed: ";
    const size_t shown = std::min<size_t>(values.size(), 5);
    for (size_t i = 0; i < shown; ++i) s += (i ? " | " : "") + values[i];
    if (values.size() > shown) s += " | ... (" + std::to_string(values.size()) + " values)";
    return s;
}

std::optional<double> LatencyDelta::p50_delta() const {
    if (!a_p50 || !b_p50) return std::nullopt;
    return *b_p50 - *a_p50;
}

std::optional<double> LatencyDelta::mean_delta() const {
    if (!a_mean || !b_mean) return std::nullopt;
    return *b_mean - *a_mean;
}

std::optional<double> PromptComparison::identical_share() const {
    if (matched == 0) return std::nullopt;
    return static_cast<double>(identical) / static_cast<double>(matched);
}

std::optional<size_t> first_divergence(const std::string& a, const std::string& b) {
    size_t i = 0, cp = 0;
    while (i < a.size() && i < b.size()) {
        const size_t la = std::max<size_t>(1, utf8_sequence_length(a, i));
        const size_t lb = std::max<size_t>(1, utf8_sequence_length(b, i));
        if (la != lb || a.compare(i, la, b, i, lb) != 0) return cp;
        i += la;
        ++cp;
    }
    if (a.size() == b.size()) return std::nullopt;
    return cp;
}

RunDiff diff_runs(const Db& db, int64_t run_a, int64_t run_b) {
    RunDiff d;
    const RunData a = read_run(db, run_a, d.warnings);
    const RunData b = read_run(db, run_b, d.warnings);
    d.a = a.header;
    d.b = b.header;
    d.fields = compare_fields(a, b);
    d.prompts = compare_prompts(a, b);
    return d;
}

RunDiff diff_runs_at(const std::string& path, int64_t run_a, int64_t run_b) {
    const HistoryReader reader = HistoryReader::open(path);
    return diff_runs(reader.db(), run_a, run_b);
}

nlohmann::json to_json(const RunDiff& d) {
    nlohmann::json fields = nlohmann::json::array();
    for (const FieldDiff& f : d.fields)
        fields.push_back({{"group", f.group},
                          {"key", f.key},
                          {"label", f.label},
                          {"changes_outputs", f.changes_outputs},
                          {"a", f.a.values},
                          {"b", f.b.values},
                          {"a_mixed", f.a.mixed()},
                          {"b_mixed", f.b.mixed()}});
    nlohmann::json divs = nlohmann::json::array();
    for (const Divergence& v : d.prompts.divergences)
        divs.push_back({{"prompt_sha256", v.prompt_sha256},
                        {"prompt", v.prompt_excerpt},
                        {"offset", v.offset ? nlohmann::json(*v.offset) : nlohmann::json(nullptr)},
                        {"a_excerpt", v.a_excerpt},
                        {"b_excerpt", v.b_excerpt},
                        {"a_response", v.a_response},
                        {"b_response", v.b_response}});
    const PromptComparison& p = d.prompts;
    return {{"a", header_json(d.a)},
            {"b", header_json(d.b)},
            {"fields", fields},
            {"prompts",
             {{"a_responses", p.a_responses},
              {"b_responses", p.b_responses},
              {"matched", p.matched},
              {"identical", p.identical},
              {"identical_share", opt_json(p.identical_share())},
              {"divergences", divs},
              {"ttft_ms", latency_json(p.ttft)},
              {"e2e_ms", latency_json(p.e2e)}}},
            {"warnings", d.warnings}};
}

}  // namespace wb::runlog
