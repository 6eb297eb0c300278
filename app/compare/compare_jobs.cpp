#include "compare/compare_jobs.h"

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/engine_session.h"
#include "core/inbox.h"
#include "core/response_log.h"
#include "core/settings_json.h"
#include "gguf/gguf.h"
#include "runlog/run_log.h"
#include "tokenizer/vocab.h"

namespace wb::compare {

namespace {

size_t hash_vocab(const tokenizer::Vocab& v) {
    size_t h = std::hash<int32_t>{}(v.n_tokens());
    for (int32_t i = 0; i < v.n_tokens(); ++i) {
        // boost::hash_combine's mixing step.
        h ^= std::hash<std::string>{}(v.text(i)) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
}

int64_t utc_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The greedy request every compare row describes (temperature 0, seed 0).
core::GenerationRequest greedy_request(const std::string& prompt, int32_t max_tokens,
                                       bool ignore_eos) {
    core::GenerationRequest r;
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    r.ignore_eos = ignore_eos;
    r.sampling.temperature = 0.0f;
    r.client_id = "compare";
    return r;
}

// A greedy run measured on its own (queue wait 0, prefill = TTFT) as the
// FinishedRequest every row is built from.
core::FinishedRequest finished_from(const GreedyRun& g, const std::string& prompt,
                                    const std::string& output, const ModelReport& m,
                                    const core::GenerationRequest& req, int64_t run_id,
                                    const std::string& label, const std::string& kv_type,
                                    uint32_t n_ubatch) {
    core::FinishedRequest f;
    f.label = label;
    f.client_id = req.client_id;
    f.run_id = run_id;
    f.prompt = prompt;
    f.prompt_tokens = g.prompt;
    f.output_tokens = g.tokens;
    if (g.stopped && !f.output_tokens.empty()) f.output_tokens.pop_back();  // the EOG token
    f.output = output;
    f.finish_reason = g.stopped ? "stop" : "length";
    f.message = g.stopped ? "end of generation token" : "max_tokens reached";
    f.seed = 0;
    core::EngineFacts facts;
    facts.n_ctx = m.n_ctx;
    facts.n_parallel = 1;
    facts.kv_type = kv_type;
    facts.backend = m.device.backend;
    facts.prefill_chunk = n_ubatch;
    facts.step_tokens = n_ubatch;
    f.settings = core::settings_json(req, 0, facts);
    f.times.submitted_ms = 0.0;
    f.times.admitted_ms = 0.0;
    if (!g.tokens.empty()) {
        f.times.first_token_ms = g.ttft_ms;
        f.times.last_token_ms = g.e2e_ms;
    }
    f.times.finished_ms = g.e2e_ms;
    f.submitted_utc_ms = submitted_utc_ms(utc_now_ms(), g.e2e_ms);
    f.model_path = m.path;
    f.device = m.device;
    return f;
}

}  // namespace

StreamResult stream_reply(const std::string& path, const std::string& prompt, uint32_t n_predict,
                          const model::LoadOptions& base, const ModelLoadFn& load,
                          const TokenSink& sink, const std::atomic<bool>& cancel,
                          const StreamDraft& draft) {
    StreamResult res;
    try {
        const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(gguf::File::open(path));
        res.vocab_hash = hash_vocab(vocab);
        const std::vector<int32_t> ids = vocab.tokenize(prompt, true);  // [n_prompt]
        if (ids.empty()) throw std::invalid_argument("the prompt has no tokens");
        core::SessionOptions so;
        so.load = base;
        so.load.context.n_ctx = static_cast<uint32_t>(ids.size()) + n_predict;
        so.load.context.n_seq_max = 1;
        so.prefill_chunk = so.load.context.n_ctx;  // the prompt in one forward pass
        so.step_tokens = so.load.context.n_ctx;
        so.limits.max_queue = 1;
        if (load) so.loader = load;
        if (draft.params.kind == scheduler::SpeculativeParams::Kind::DraftModel)
            so.draft_model = draft.model_path;
        if (cancel.load()) throw Cancelled{};
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<core::EngineSession> session = core::EngineSession::open(path, so);
        res.load_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        core::GenerationRequest req = greedy_request({}, static_cast<int32_t>(n_predict), true);
        req.prompt_tokens = ids;
        req.speculative = draft.params;
        core::Inbox<core::RequestEvent> inbox;
        const core::RequestHandle h =
            session->submit(req, [&inbox](const core::RequestEvent& e) { inbox.push(e); });
        std::shared_ptr<const core::FinishedRequest> fin;
        std::vector<core::RequestEvent> events;
        bool cancel_sent = false;
        while (!fin) {
            events.clear();
            inbox.wait_pop(events, std::chrono::milliseconds(50));
            if (cancel.load() && !cancel_sent) {
                h.cancel();
                cancel_sent = true;
            }
            for (const core::RequestEvent& e : events) {
                if (e.type == core::RequestEvent::Type::Token && sink)
                    sink(e.token, vocab.token_to_piece(e.token));
                if (e.type == core::RequestEvent::Type::Finished) fin = e.result;
            }
        }
        if (fin->finish_reason == "cancelled") throw Cancelled{};
        if (!fin->completed()) throw std::runtime_error(fin->message);
        res.run.prompt = ids;
        res.run.n_prompt = static_cast<uint32_t>(ids.size());
        res.run.tokens = fin->output_tokens;
        res.run.prefill_ms = fin->prefill_ms().value_or(0.0);
        res.run.ttft_ms = fin->ttft_ms().value_or(0.0);
        res.run.e2e_ms = fin->e2e_ms().value_or(0.0);
        res.speculative = fin->speculative;
        // The session stays alive as long as its model is used.
        res.model = std::shared_ptr<model::Model>(session, &session->model());
    } catch (const Cancelled&) {
        res.cancelled = true;
        res.error = "cancelled";
    } catch (const std::exception& e) {
        res.error = e.what();
    }
    return res;
}

int64_t submitted_utc_ms(int64_t ended_utc_ms, double e2e_ms) {
    // Truncating here while finished_utc_ms() rounds put a row's end up to
    // a millisecond after it was logged, after the run's ended_ms.
    return ended_utc_ms - static_cast<int64_t>(std::llround(e2e_ms));
}

size_t responses_in(const CompareReport& r) {
    size_t n = 0;
    for (const auto& m : r.models) n += m.outputs.size() + m.test_outputs.size();
    return n;
}

int64_t log_comparison(const std::string& db_path, const std::string& name, const CompareReport& r,
                       const model::LoadOptions& base, bool no_text,
                       const std::optional<cost::Price>& price) {
    core::ResponseLogger logger(std::make_shared<runlog::RunLog>(runlog::RunLog::open(db_path)));
    return log_comparison(logger, name, r, base, no_text, price);
}

int64_t log_comparison(core::ResponseLogger& logger, const std::string& name,
                       const CompareReport& r, const model::LoadOptions& base, bool no_text,
                       const std::optional<cost::Price>& price) {
    nlohmann::json models = nlohmann::json::array();
    for (const auto& m : r.models) models.push_back(m.label + "=" + m.path);
    nlohmann::json run_settings = {{"models", models},
                                   {"n_predict", r.n_predict},
                                   {"repetitions", r.repetitions},
                                   {"warmup_passes", kWarmupPasses},
                                   {"speed_method", speed_method(r.repetitions)},
                                   {"kv_type", r.kv_type},
                                   {"sampling", "greedy"},
                                   {"text_file", r.text_file.value_or("")},
                                   {"ppl_ctx", r.ppl_ctx},
                                   {"testset_file", r.testset_file.value_or("")},
                                   {"backend", base.backend},
                                   {"device", base.device}};
    if (price) run_settings["price"] = cost::to_json(*price);
    const int64_t run = logger.begin_run("compare", name, run_settings, no_text);
    const uint32_t n_ubatch = CompareOptions{}.n_ubatch;
    for (const auto& m : r.models) {
        for (size_t k = 0; k < m.outputs.size() && k < r.prompts.size(); ++k) {
            const core::GenerationRequest req =
                greedy_request(r.prompts[k], static_cast<int32_t>(r.n_predict), true);
            core::FinishedRequest f =
                finished_from(m.runs[k], r.prompts[k], m.outputs[k], m, req, run,
                              m.label + "/p" + std::to_string(k), r.kv_type, n_ubatch);
            f.settings["compare_label"] = m.label;
            logger.finish(f);
        }
        for (size_t k = 0; k < m.test_outputs.size() && k < r.test_items.size(); ++k) {
            const TestItem& it = r.test_items[k];
            const core::GenerationRequest req =
                greedy_request(it.prompt, static_cast<int32_t>(it.max_tokens), false);
            core::FinishedRequest f =
                finished_from(m.test_runs[k], it.prompt, m.test_outputs[k], m, req, run,
                              m.label + "/t:" + it.id, r.kv_type, n_ubatch);
            f.settings["compare_label"] = m.label;
            f.settings["answer"] = it.answer;
            f.settings["match"] = it.mode == MatchMode::Exact ? "exact" : "contains";
            f.settings["correct"] = static_cast<bool>(m.test_correct[k]);
            logger.finish(f);
        }
    }
    // Rows that could not be written (a busy or full log) are retried once
    // more; what is still missing is an error the caller reports.
    if (const size_t missing = logger.flush(); missing > 0)
        throw std::runtime_error(
            std::to_string(missing) + " of " + std::to_string(responses_in(r)) +
            " responses of the comparison are not logged: " + logger.last_error());
    logger.end_run(run);
    return run;
}

}  // namespace wb::compare
