#include "core/response_log.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/settings_json.h"

namespace wb::core {

runlog::EnvironmentInfo environment_of(const model::DeviceFacts& device) {
    if (device.backend == "cpu") return runlog::collect_environment("cpu");
    model::DeviceFacts d = device;
    d.backend = "vulkan";
    return runlog::collect_environment(d);
}

runlog::ResponseRecord response_record(const FinishedRequest& f, const LogTags& tags) {
    runlog::ResponseRecord r;
    r.run_id = f.run_id;
    r.model_version_id = tags.model_version_id;
    r.environment_id = tags.environment_id;
    r.request_id = f.label;
    r.settings = f.settings.is_object() ? f.settings : nlohmann::json::object();
    // Only a sequence that went past the training context carries the flag
    // (with the context it passed), so other rows keep their settings.
    if (f.past_n_ctx_train) {
        r.settings["past_n_ctx_train"] = true;
        r.settings["n_ctx_train"] = f.n_ctx_train;
    }
    // What speculation did, beside the settings that asked for it (the
    // schema has no columns for it).
    if (!f.speculative.drafter.empty())
        r.settings["speculative_stats"] = speculative_stats_json(f.speculative);
    r.prompt = f.prompt;
    r.prompt_tokens = static_cast<int64_t>(f.prompt_tokens.size());
    r.output = f.output;
    r.output_tokens = static_cast<int64_t>(f.output_tokens.size());
    r.finish_reason = f.finish_reason;
    if (!f.completed()) r.error = f.message;
    r.queue_wait_ms = f.queue_wait_ms();
    r.prefill_ms = f.prefill_ms();
    r.ttft_ms = f.ttft_ms();
    r.tpot_ms = f.tpot_ms();
    r.e2e_ms = f.e2e_ms();
    r.prefill_tps = f.prefill_tps();
    r.decode_tps = f.decode_tps();
    if (f.admitted()) {
        r.prompt_cached_tokens = f.prompt_tokens_cached;
        r.preemptions = f.preemptions;
    }
    r.started_ms = f.submitted_utc_ms;
    r.finished_ms = f.finished_utc_ms();
    return r;
}

runlog::ModelLoadRecord model_load_record(const SessionLoadTimes& t, const EngineFacts& facts,
                                          const model::DeviceFacts& device, const LogTags& tags,
                                          std::string_view surface, std::optional<int64_t> run_id) {
    runlog::ModelLoadRecord l;
    l.model_version_id = tags.model_version_id;
    l.environment_id = tags.environment_id;
    l.run_id = run_id;
    l.surface = std::string(surface);
    l.settings = {{"backend", facts.backend},
                  {"device", device.backend == "cpu" ? std::string() : device.name},
                  {"n_ctx", facts.n_ctx},
                  {"n_parallel", facts.n_parallel},
                  {"kv_type", facts.kv_type}};
    l.opened_ms = t.opened_utc_ms;
    l.vocab_ms = t.vocab_ms;
    if (t.phases_known) {
        l.map_ms = t.model.map_ms;
        l.parse_ms = t.model.parse_ms;
        l.device_ms = t.model.device_ms;
        l.upload_ms = t.model.upload_ms;
        // Vulkan creates its pipelines on first use, inside the first
        // request (their time is part of first_token_ms): at load they are
        // not known, so NULL, never a measured-looking 0.
        if (t.model.pipelines > 0) {
            l.pipelines_ms = t.model.pipelines_ms;
            l.pipelines = static_cast<int64_t>(t.model.pipelines);
        }
    }
    l.ready_ms = t.ready_ms;
    l.pipeline_cache_bytes = static_cast<int64_t>(t.model.pipeline_cache_bytes);
    if (device.backend == "cpu")
        l.pipeline_cache = "none";
    else
        l.pipeline_cache = t.model.pipeline_cache_bytes > 0 ? "warm" : "cold";
    return l;
}

std::string row_key(const FinishedRequest& f) {
    return std::to_string(f.session_id) + ':' + std::to_string(f.id);
}

ResponseLogger::ResponseLogger(std::shared_ptr<runlog::RunLog> log, double min_update_ms)
    : log_(std::move(log)), rows_(*log_, min_update_ms) {}

int64_t ResponseLogger::begin_run(std::string_view kind, const std::string& name,
                                  const nlohmann::json& settings, bool no_text) {
    return log_->begin_run(kind, name, settings, no_text);
}

void ResponseLogger::end_run(int64_t run_id) {
    log_->end_run(run_id);
}

LogTags ResponseLogger::tags(const std::string& model_path, const model::DeviceFacts& device) {
    const std::string device_key = device.backend + '\n' + device.name + '\n' + device.type + '\n' +
                                   device.driver_name + '\n' + device.driver_version + '\n' +
                                   device.api_version;
    {
        std::lock_guard lock(mu_);
        auto m = model_versions_.find(model_path);
        auto e = environments_.find(device_key);
        if (m != model_versions_.end() && e != environments_.end()) return {m->second, e->second};
    }
    // Outside the lock: the first hash of a large file takes seconds.
    LogTags t;
    t.model_version_id = log_->ensure_model_version(model_path);
    t.environment_id = log_->ensure_environment(environment_of(device));
    std::lock_guard lock(mu_);
    model_versions_[model_path] = t.model_version_id;
    environments_[device_key] = t.environment_id;
    return t;
}

int64_t ResponseLogger::log_load(const EngineSession& session, std::string_view surface,
                                 std::optional<int64_t> run_id) {
    return log_load(session.model_path(), session.device(), session.session_id(),
                    session.load_times(), session.facts(), surface, run_id);
}

int64_t ResponseLogger::log_load(const std::string& model_path, const model::DeviceFacts& device,
                                 uint64_t session_id, const SessionLoadTimes& times,
                                 const EngineFacts& facts, std::string_view surface,
                                 std::optional<int64_t> run_id) {
    const LogTags t = tags(model_path, device);
    const int64_t row =
        log_->log_model_load(model_load_record(times, facts, device, t, surface, run_id));
    std::lock_guard lock(mu_);
    loads_[session_id] = {row, times.ready_ms};
    return row;
}

void ResponseLogger::start(const FinishedRequest& started) {
    if (started.run_id == 0) return;
    runlog::ResponseRecord r = response_record(started, tags(started.model_path, started.device));
    // The started row: what is known before any output.
    r.output.clear();
    r.output_tokens.reset();
    r.error.clear();
    r.finish_reason = "interrupted";
    r.finished_ms.reset();
    rows_.start(row_key(started), r);
}

void ResponseLogger::text(const FinishedRequest& started, const std::string& output, int64_t tokens,
                          double now_ms) {
    if (started.run_id == 0) return;
    rows_.text(row_key(started), output, tokens, now_ms);
}

void ResponseLogger::finish(const FinishedRequest& f) {
    // The session's first request with a token completes its cold start.
    if (!std::isnan(f.times.first_token_ms)) {
        std::optional<PendingLoad> load;
        {
            std::lock_guard lock(mu_);
            if (auto it = loads_.find(f.session_id); it != loads_.end()) {
                load = it->second;
                loads_.erase(it);
            }
        }
        if (load) {
            try {
                // Open to ready plus the request's own TTFT: the time the
                // session waited for its first request (a person typing in
                // the app) is not part of the cold start.
                const double ttft = f.ttft_ms().value_or(0.0);
                log_->set_model_load_first_token(load->row, load->ready_ms + ttft, ttft);
            } catch (const std::exception& e) {
                // The load row keeps "first token unknown"; responses go on,
                // and the failure is told like a failed response write.
                std::lock_guard lock(mu_);
                load_error_ =
                    std::string("the first token of the model load is not logged: ") + e.what();
            }
        }
    }
    if (f.run_id == 0) return;
    rows_.finish(row_key(f), response_record(f, tags(f.model_path, f.device)));
}

void ResponseLogger::request_started(const std::shared_ptr<const FinishedRequest>& started) {
    try {
        start(*started);
    } catch (const std::exception& e) {
        std::lock_guard lock(mu_);
        record_error_ = last_record_error_ = std::string("a response is not logged: ") + e.what();
    }
}

void ResponseLogger::request_text(const std::shared_ptr<const FinishedRequest>& started,
                                  const std::string& output, int64_t tokens, double now_ms) {
    text(*started, output, tokens, now_ms);
}

void ResponseLogger::request_finished(const std::shared_ptr<const FinishedRequest>& result) {
    try {
        finish(*result);
    } catch (const std::exception& e) {
        std::lock_guard lock(mu_);
        record_error_ = last_record_error_ = std::string("a response is not logged: ") + e.what();
        ++lost_;
    }
}

size_t ResponseLogger::flush() {
    const size_t kept = rows_.flush();
    std::lock_guard lock(mu_);
    return kept + lost_;
}
size_t ResponseLogger::unlogged() const {
    const size_t kept = rows_.unlogged();
    std::lock_guard lock(mu_);
    return kept + lost_;
}
std::string ResponseLogger::last_error() const {
    std::string e = rows_.last_error();
    if (!e.empty()) return e;
    std::lock_guard lock(mu_);
    return last_record_error_;
}
std::string ResponseLogger::take_new_error() {
    {
        std::lock_guard lock(mu_);
        if (!load_error_.empty()) return std::exchange(load_error_, std::string());
        if (!record_error_.empty()) return std::exchange(record_error_, std::string());
    }
    return rows_.take_new_error();
}

}  // namespace wb::core
