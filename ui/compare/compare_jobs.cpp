#include "compare/compare_jobs.h"

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gguf/gguf.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "runlog/vk_device.h"
#include "tokenizer/vocab.h"

namespace wb::ui::compare {

namespace {

int64_t now_utc_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

size_t hash_vocab(const tokenizer::Vocab& v) {
    size_t h = std::hash<int32_t>{}(v.n_tokens());
    for (int32_t i = 0; i < v.n_tokens(); ++i) {
        // boost::hash_combine's mixing step.
        h ^= std::hash<std::string>{}(v.text(i)) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
}

}  // namespace

StreamResult stream_reply(const std::string& path, const std::string& prompt, uint32_t n_predict,
                          const model::LoadOptions& base, const ModelLoadFn& load,
                          const TokenSink& sink, const std::atomic<bool>& cancel) {
    StreamResult res;
    try {
        const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(gguf::File::open(path));
        res.vocab_hash = hash_vocab(vocab);
        const std::vector<int32_t> ids = vocab.tokenize(prompt, true);  // [n_prompt]
        if (ids.empty()) throw std::invalid_argument("the prompt has no tokens");
        model::LoadOptions lo = base;
        lo.context.n_ctx = static_cast<uint32_t>(ids.size()) + n_predict;
        lo.context.n_seq_max = 1;
        if (cancel.load()) throw Cancelled{};
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<model::Model> m = load(path, lo);
        res.load_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        if (!m) throw std::runtime_error(path + ": the loader returned no model");
        size_t sent = 0;  // tokens handed to the sink so far
        res.run = wb::compare::greedy_generate(*m, ids, n_predict, 512, [&](int32_t id) {
            if (sink) sink(id, vocab.token_to_piece(id));
            ++sent;
            if (cancel.load()) throw Cancelled{};
            return false;
        });
        // greedy_generate consults stop() only before another step, so the
        // last token has not been handed out yet.
        for (size_t i = sent; i < res.run.tokens.size(); ++i) {
            if (sink) sink(res.run.tokens[i], vocab.token_to_piece(res.run.tokens[i]));
        }
        res.model = std::move(m);  // sequence 0 is empty again (greedy_generate)
    } catch (const Cancelled&) {
        res.cancelled = true;
        res.error = "cancelled";
    } catch (const std::exception& e) {
        res.error = e.what();
    }
    return res;
}

size_t responses_in(const wb::compare::CompareReport& r) {
    size_t n = 0;
    for (const auto& m : r.models) n += m.outputs.size() + m.test_outputs.size();
    return n;
}

int64_t log_comparison(const std::string& db_path, const std::string& name,
                       const wb::compare::CompareReport& r, const model::LoadOptions& base) {
    runlog::RunLog log = runlog::RunLog::open(db_path);
    nlohmann::json models = nlohmann::json::array();
    for (const auto& m : r.models) models.push_back(m.label + "=" + m.path);
    const nlohmann::json run_settings = {{"models", models},
                                         {"n_predict", r.n_predict},
                                         {"kv_type", r.kv_type},
                                         {"sampling", "greedy"},
                                         {"text_file", r.text_file.value_or("")},
                                         {"ppl_ctx", r.ppl_ctx},
                                         {"testset_file", r.testset_file.value_or("")},
                                         {"backend", base.backend},
                                         {"device", base.device}};
    const int64_t run = log.begin_run(runlog::RunKind::Compare, name, run_settings);
    const runlog::DeviceInfo dev = base.backend == "vulkan"
                                       ? runlog::describe_vulkan_device(base.device)
                                       : runlog::DeviceInfo{};
    const int64_t env = log.ensure_environment(runlog::collect_environment(base.backend, dev));
    for (const auto& m : r.models) {
        const int64_t mv = log.ensure_model_version(m.path);
        nlohmann::json settings = {
            {"temperature", 0.0},   {"sampling", "greedy"},    {"seed", 0},
            {"n_ctx", m.n_ctx},     {"n_parallel", 1},         {"prompt_mode", "raw"},
            {"kv_type", r.kv_type}, {"compare_label", m.label}};
        for (size_t k = 0; k < m.outputs.size() && k < r.prompts.size(); ++k) {
            const wb::compare::GreedyRun& g = m.runs[k];
            runlog::ResponseRecord rec;
            rec.run_id = run;
            rec.model_version_id = mv;
            rec.environment_id = env;
            rec.request_id = m.label + "/p" + std::to_string(k);
            rec.settings = settings;
            rec.settings["max_tokens"] = r.n_predict;
            rec.prompt = r.prompts[k];
            rec.prompt_tokens = g.n_prompt;
            rec.output = m.outputs[k];
            rec.output_tokens = static_cast<int64_t>(g.tokens.size());
            rec.finish_reason = "length";
            rec.ttft_ms = g.ttft_ms;
            rec.e2e_ms = g.e2e_ms;
            if (g.tokens.size() > 1) {
                rec.tpot_ms = (g.e2e_ms - g.ttft_ms) / static_cast<double>(g.tokens.size() - 1);
            }
            rec.prefill_tps = g.prefill_tps();
            rec.decode_tps = g.decode_tps();
            rec.finished_ms = now_utc_ms();
            rec.started_ms = *rec.finished_ms - static_cast<int64_t>(g.e2e_ms);
            log.log_response(rec);
        }
        for (size_t k = 0; k < m.test_outputs.size() && k < r.test_items.size(); ++k) {
            const wb::compare::TestItem& it = r.test_items[k];
            runlog::ResponseRecord rec;
            rec.run_id = run;
            rec.model_version_id = mv;
            rec.environment_id = env;
            rec.request_id = m.label + "/t:" + it.id;
            rec.settings = settings;
            rec.settings["max_tokens"] = it.max_tokens;
            rec.settings["answer"] = it.answer;
            rec.settings["match"] = it.mode == wb::compare::MatchMode::Exact ? "exact" : "contains";
            rec.settings["correct"] = static_cast<bool>(m.test_correct[k]);
            rec.prompt = it.prompt;
            rec.output = m.test_outputs[k];
            rec.finish_reason = "stop";
            rec.started_ms = now_utc_ms();
            rec.finished_ms = rec.started_ms;
            log.log_response(rec);
        }
    }
    log.end_run(run);
    return run;
}

}  // namespace wb::ui::compare
