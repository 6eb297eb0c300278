#pragma once
// The settings a response ran with, as the run log stores them
// (responses.settings): one JSON object, numbers as numbers, the same keys
// from every surface. The context is described once:
//   n_ctx       the context: the KV pool's size in tokens, shared by the
//               running requests; one request may use all of it
//   n_parallel  most requests running at once (sequences in the pool)
// Qt-free.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/generation_request.h"

namespace wb::core {

/// The engine a request runs on, as far as its settings go.
struct EngineFacts {
    uint32_t n_ctx = 0;          ///< ContextParams::n_ctx (tokens, the shared KV pool)
    uint32_t n_parallel = 0;     ///< most requests at once (ContextParams::n_seq_max)
    std::string kv_type;         ///< "f32" | "f16" | "q8_0" | "q4_0"
    std::string backend;         ///< "vulkan" | "cpu" (the device is in the environment row)
    uint32_t prefill_chunk = 0;  ///< prompt tokens of one request per step
    uint32_t step_tokens = 0;    ///< token budget of one ubatch
    std::string draft_model;     ///< path of the session's draft model ("" = none)
};

/// How a request's prompt became token ids, so two environments that
/// tokenize or template differently can be told apart in the run log.
struct PromptFacts {
    bool add_bos = false;         ///< the vocabulary put BOS in front (Vocab::add_bos)
    std::string pre_tokenizer;    ///< Vocab::pre_family() ("" for SentencePiece)
    bool parse_special = false;   ///< special-token text became control ids (chat: true)
    std::string template_name;    ///< chat only: ChatTemplate::name ("model", "chatml", ...)
    std::string template_sha256;  ///< chat only: SHA-256 of the template source
};

/// How a prompt became token ids, as every surface spells it (the run
/// log's settings, the app's reply record, `generate --json`'s "chat"
/// block): prompt_mode ("raw" | "chat" | "tokens"); add_bos,
/// pre_tokenizer and parse_special unless the prompt was given as tokens;
/// chat_template and chat_template_sha256 for a chat prompt. Never throws
/// (beyond allocation).
nlohmann::json prompt_format_json(PromptMode mode, const PromptFacts& prompt);

/// What speculative decoding did for one request, as every surface spells
/// it (the run log's speculative_stats, `generate --json` and `batch`
/// records' "speculative"): drafter, target_passes, verify_passes,
/// shared_passes, drafted, accepted, acceptance_rate, mean_accepted_per_pass,
/// decode_rows, decode_tokens (counts), draft_ms and verify_ms (ms). null
/// when the request did not speculate (s.drafter empty).
nlohmann::json speculative_stats_json(const scheduler::SpeculativeStats& s);

/// A float setting as the short decimal it was typed as: 0.95f is logged
/// as 0.95, not 0.949999988079071 (shortest %.7g round trip).
double as_decimal(float v);

/// The settings object of a response:
///   temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n,
///   seed (the seed used, a number), seed_policy ("fixed" | "random" |
///   "base+index"), max_tokens, stop (array), ignore_eos,
///   queue_timeout_ms and timeout_ms (numbers, null = no limit),
///   top_logprobs (only when >= 0),
///   prompt_mode ("raw" | "chat" | "tokens"), n_ctx, n_parallel,
///   kv_type, backend, prefill_chunk, step_tokens, and how the
///   text became ids (PromptFacts): add_bos, pre_tokenizer, parse_special,
///   and for chat chat_template (name) and chat_template_sha256; then every
///   key of r.log_settings (an object) that is not one of these.
nlohmann::json settings_json(const GenerationRequest& r, uint64_t seed, const EngineFacts& f,
                             const PromptFacts& prompt = {});

}  // namespace wb::core
