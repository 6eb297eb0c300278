#include "core/response_log.h"

#include <stdexcept>

namespace wb::core {

runlog::EnvironmentInfo environment_of(const model::DeviceFacts& device) {
    runlog::DeviceInfo d;
    if (device.backend != "cpu") {
        d.name = device.name;
        d.type = device.type;
        d.driver_name = device.driver_name;
        d.driver_version = device.driver_version;
        d.api_version = device.api_version;
    }
    return runlog::collect_environment(device.backend == "cpu" ? "cpu" : "vulkan", d);
}

runlog::ResponseRecord response_record(const FinishedRequest& f, const LogTags& tags) {
    runlog::ResponseRecord r;
    r.run_id = f.run_id;
    r.model_version_id = tags.model_version_id;
    r.environment_id = tags.environment_id;
    r.request_id = f.label;
    r.settings = f.settings.is_object() ? f.settings : nlohmann::json::object();
    r.prompt = f.prompt;
    r.prompt_tokens = static_cast<int64_t>(f.prompt_tokens.size());
    r.output = f.output;
    r.output_tokens = static_cast<int64_t>(f.output_tokens.size());
    r.finish_reason = f.finish_reason;
    if (!f.completed()) r.error = f.message;
    r.queue_wait_ms = f.queue_wait_ms();
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

std::string row_key(const FinishedRequest& f) {
    return std::to_string(f.session_id) + ':' + std::to_string(f.id);
}

ResponseLogger::ResponseLogger(std::shared_ptr<runlog::RunLog> log, double min_update_ms)
    : log_(std::move(log)), rows_(*log_, min_update_ms) {}

int64_t ResponseLogger::begin_run(std::string_view kind, const std::string& name,
                                  const nlohmann::json& settings) {
    for (runlog::RunKind k : {runlog::RunKind::Generate, runlog::RunKind::Chat,
                              runlog::RunKind::Batch, runlog::RunKind::Compare})
        if (runlog::to_string(k) == kind) return log_->begin_run(k, name, settings);
    throw std::invalid_argument("run kind \"" + std::string(kind) +
                                "\" is not one of generate, chat, batch, compare");
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
    if (f.run_id == 0) return;
    rows_.finish(row_key(f), response_record(f, tags(f.model_path, f.device)));
}

size_t ResponseLogger::flush() {
    return rows_.flush();
}
size_t ResponseLogger::unlogged() const {
    return rows_.unlogged();
}
std::string ResponseLogger::last_error() const {
    return rows_.last_error();
}
std::string ResponseLogger::take_new_error() {
    return rows_.take_new_error();
}

}  // namespace wb::core
