#include "core/settings_json.h"

#include <cstdio>
#include <cstdlib>

namespace wb::core {

double as_decimal(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v));
    return std::strtod(buf, nullptr);
}

nlohmann::json speculative_stats_json(const scheduler::SpeculativeStats& s) {
    if (s.drafter.empty()) return nullptr;
    return {{"drafter", s.drafter},
            {"target_passes", s.target_passes},
            {"verify_passes", s.verify_passes},
            {"shared_passes", s.shared_passes},
            {"drafted", s.drafted},
            {"accepted", s.accepted},
            {"acceptance_rate", s.acceptance_rate()},
            {"mean_accepted_per_pass", s.mean_accepted_per_pass()},
            {"decode_rows", s.decode_rows},
            {"decode_tokens", s.decode_tokens},
            {"draft_ms", s.draft_ms},
            {"verify_ms", s.verify_ms}};
}

nlohmann::json prompt_format_json(PromptMode mode, const PromptFacts& prompt) {
    nlohmann::json j = {{"prompt_mode", to_string(mode)}};
    if (mode != PromptMode::Tokens) {
        j["add_bos"] = prompt.add_bos;
        j["pre_tokenizer"] = prompt.pre_tokenizer;
        j["parse_special"] = prompt.parse_special;
    }
    if (mode == PromptMode::Chat) {
        j["chat_template"] = prompt.template_name;
        j["chat_template_sha256"] = prompt.template_sha256;
    }
    return j;
}

nlohmann::json settings_json(const GenerationRequest& r, uint64_t seed, const EngineFacts& f,
                             const PromptFacts& prompt) {
    const sampling::SamplingParams& s = r.sampling;
    auto limit = [](int64_t ms) { return ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(ms); };
    const PromptMode mode = prompt_mode(r);
    nlohmann::json j = {
        {"temperature", as_decimal(s.temperature)},
        {"top_k", s.top_k},
        {"top_p", as_decimal(s.top_p)},
        {"min_p", as_decimal(s.min_p)},
        {"repeat_penalty", as_decimal(s.repeat_penalty)},
        {"repeat_last_n", s.repeat_last_n},
        {"seed", seed},
        {"seed_policy", to_string(r.seed.policy)},
        {"max_tokens", r.max_tokens},
        {"stop", r.stop},
        {"ignore_eos", r.ignore_eos},
        {"queue_timeout_ms", limit(r.queue_timeout_ms)},
        {"timeout_ms", limit(r.timeout_ms)},
        {"prompt_mode", to_string(mode)},
        {"n_ctx", f.n_ctx},
        {"n_parallel", f.n_parallel},
        {"kv_type", f.kv_type},
        {"backend", f.backend},
        {"prefill_chunk", f.prefill_chunk},
        {"step_tokens", f.step_tokens},
    };
    // Only when asked: it does not change the output, and rows without it
    // stay as they were.
    if (r.top_logprobs >= 0) j["top_logprobs"] = r.top_logprobs;
    if (r.speculative.kind != scheduler::SpeculativeParams::Kind::None) {
        nlohmann::json sp = {{"kind", scheduler::to_string(r.speculative.kind)},
                             {"k", r.speculative.k},
                             {"adaptive", r.speculative.adaptive}};
        if (r.speculative.kind == scheduler::SpeculativeParams::Kind::DraftModel)
            sp["draft_model"] = f.draft_model;
        else
            sp["ngram"] = {r.speculative.ngram_min, r.speculative.ngram_max};
        j["speculative"] = sp;
    }
    j.update(prompt_format_json(mode, prompt));
    // The surface's own facts; the standard keys above win a clash.
    if (r.log_settings.is_object())
        for (const auto& [key, value] : r.log_settings.items())
            if (!j.contains(key)) j[key] = value;
    return j;
}

}  // namespace wb::core
