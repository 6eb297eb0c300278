#include "load/load_log.h"

#include <chrono>

#include "runlog/environment.h"
#include "runlog/sha256.h"
#include "runlog/sqlite_db.h"

namespace wb::load {
namespace {

int64_t utc_now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

int64_t remote_model_version(runlog::RunLog& log, const std::string& url,
                             const std::string& model) {
    const std::string sha = runlog::sha256_hex("remote-model\n" + url + "\n" + model);
    int64_t id = 0;
    log.with_connection([&](const runlog::Db& db) {
        runlog::Stmt ins(db,
                         "INSERT OR IGNORE INTO model_versions (sha256, path, file_size, name, "
                         "architecture, tensor_types, n_params, first_seen_ms) "
                         "VALUES (?, ?, 0, ?, 'remote', '{}', 0, ?)");
        ins.bind(1, std::string_view(sha))
            .bind(2, std::string_view(url))
            .bind(3, std::string_view(model))
            .bind(4, utc_now_ms());
        ins.run();
        runlog::Stmt sel(db, "SELECT id FROM model_versions WHERE sha256 = ?");
        sel.bind(1, std::string_view(sha));
        if (sel.step()) id = sel.int64(0);
    });
    return id;
}

nlohmann::json load_run_settings(const Target& target, const std::string& api, const StepPlan& plan,
                                 int max_tokens, int sweep, const Slo& slo,
                                 const std::string& compare_target) {
    nlohmann::json j = {{"target", target.base_url},
                        {"model", target.model},
                        {"api", api},
                        {"arrival", to_string(plan.arrival)},
                        {"rate", plan.rate},
                        {"burstiness", plan.burstiness},
                        {"requests", plan.requests},
                        {"warmup", plan.warmup},
                        {"max_tokens", max_tokens},
                        {"sweep", sweep},
                        {"seed", plan.seed}};
    if (plan.concurrency) j["concurrency"] = *plan.concurrency;
    if (plan.max_in_flight) j["max_in_flight"] = *plan.max_in_flight;
    if (plan.duration_s) j["duration_s"] = *plan.duration_s;
    if (slo.ttft_p99_ms) j["slo_ttft_p99_ms"] = *slo.ttft_p99_ms;
    if (slo.itl_p99_ms) j["slo_itl_p99_ms"] = *slo.itl_p99_ms;
    if (slo.e2e_p99_ms) j["slo_e2e_p99_ms"] = *slo.e2e_p99_ms;
    if (!compare_target.empty()) j["compare_target"] = compare_target;
    return j;
}

LoadLog::LoadLog(const std::string& db_path, const std::string& target_url,
                 const std::string& model_id, const std::string& local_model,
                 const nlohmann::json& run_settings)
    : log_(runlog::RunLog::open(db_path)) {
    model_version_ = local_model.empty() ? remote_model_version(log_, target_url, model_id)
                                         : log_.ensure_model_version(local_model);
    // The client machine's environment; the backend column only admits
    // vulkan|cpu, and the load generator computes on the CPU.
    environment_ = log_.ensure_environment(runlog::collect_environment("cpu"));
    run_ = log_.begin_run("load_test", target_url, run_settings);
    writer_ = std::thread([this] { writer(); });
}

LoadLog::~LoadLog() {
    stop_writer();
}

void LoadLog::writer() {
    std::unique_lock lock(mu_);
    for (;;) {
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and everything written
        runlog::ResponseRecord rec = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        std::string err;
        try {
            log_.log_response(rec);
        } catch (const std::exception& e) {
            err = e.what();
        }
        lock.lock();
        if (!err.empty() && write_errors_++ == 0) first_error_ = err;
    }
}

void LoadLog::stop_writer() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
}

size_t LoadLog::write_errors() const {
    std::lock_guard lock(mu_);
    return write_errors_;
}

std::string LoadLog::first_write_error() const {
    std::lock_guard lock(mu_);
    return first_error_;
}

void log_remote_row(runlog::RunLog& log, runlog::ResponseRecord rec, const std::string& url,
                    const std::string& model) {
    rec.model_version_id = remote_model_version(log, url, model);
    rec.environment_id = log.ensure_environment(runlog::collect_environment("cpu"));
    log.log_response(rec);
}

runlog::ResponseRecord remote_record(const RequestSpec& spec, const RequestResult& r,
                                     nlohmann::json row_settings) {
    runlog::ResponseRecord rec;
    if (!r.response_id.empty()) row_settings["response_id"] = r.response_id;
    if (!r.served_model.empty()) row_settings["served_model"] = r.served_model;
    row_settings["http_status"] = r.http_status;
    row_settings["streamed"] = r.streamed;
    row_settings["output_tokens_source"] = r.output_tokens_source;
    row_settings["itl_count"] = r.itl_ms.size();
    if (!r.server_headers.empty()) row_settings["server_headers"] = r.server_headers;
    if (!spec.user.empty()) row_settings["user"] = spec.user;
    row_settings["max_tokens"] = spec.max_tokens;
    rec.settings = std::move(row_settings);
    rec.prompt = spec.prompt;
    rec.prompt_tokens = r.prompt_tokens;
    rec.output = r.output;
    rec.output_tokens = r.output_tokens;
    if (r.ok) {
        rec.finish_reason = r.finish_reason == "length" ? "length" : "stop";
    } else if (r.error == "cancelled") {
        rec.finish_reason = "cancelled";
    } else {
        rec.finish_reason = r.timed_out ? "timeout" : "error";
        rec.error = r.error;
    }
    rec.ttft_ms = r.ttft_ms;
    rec.queue_wait_ms = r.server_queue_ms;  // what the target reported, if it did
    rec.tpot_ms = r.tpot_ms;
    rec.e2e_ms = r.e2e_ms;
    if (r.tpot_ms && *r.tpot_ms > 0) rec.decode_tps = 1000.0 / *r.tpot_ms;
    // Called as the request ends: its wall-clock start is now minus e2e.
    const double now_wall = static_cast<double>(utc_now_ms());
    const double e2e = r.e2e_ms.value_or(0);
    rec.finished_ms = static_cast<int64_t>(now_wall);
    rec.started_ms = static_cast<int64_t>(now_wall - e2e);
    return rec;
}

void LoadLog::log(const RequestSpec& spec, const RequestResult& r, nlohmann::json row_settings) {
    runlog::ResponseRecord rec = remote_record(spec, r, std::move(row_settings));
    rec.run_id = run_;
    rec.model_version_id = model_version_;
    rec.environment_id = environment_;
    log_.log_response(rec);
}

void LoadLog::end() {
    log_.end_run(run_);
}

}  // namespace wb::load
