#include "core/generation_request.h"

#include <limits>
#include <random>

namespace wb::core {

const char* to_string(SeedPolicy p) {
    switch (p) {
        case SeedPolicy::Fixed:
            return "fixed";
        case SeedPolicy::Random:
            return "random";
        case SeedPolicy::BasePlusIndex:
            return "base+index";
    }
    return "fixed";
}

uint64_t resolve_seed(const SeedSpec& s) {
    switch (s.policy) {
        case SeedPolicy::Fixed:
            return s.value;
        case SeedPolicy::BasePlusIndex:
            return s.value + s.index;
        case SeedPolicy::Random: {
            std::random_device rd;
            const uint64_t v = (uint64_t{rd()} << 32) ^ rd();
            return v & uint64_t{std::numeric_limits<int64_t>::max()};
        }
    }
    return s.value;
}

const char* to_string(PromptMode m) {
    switch (m) {
        case PromptMode::Raw:
            return "raw";
        case PromptMode::Chat:
            return "chat";
        case PromptMode::Tokens:
            return "tokens";
    }
    return "raw";
}

PromptMode prompt_mode(const GenerationRequest& r) {
    if (!r.messages.empty()) return PromptMode::Chat;
    if (!r.prompt_tokens.empty()) return PromptMode::Tokens;
    return PromptMode::Raw;
}

std::string validate(const GenerationRequest& r) {
    const int forms = (r.messages.empty() ? 0 : 1) + (r.prompt.empty() ? 0 : 1) +
                      (r.prompt_tokens.empty() ? 0 : 1);
    if (forms > 1) return "give one of messages, prompt and prompt_tokens, not several";
    if (forms == 0) return "empty prompt";
    if (r.max_tokens < 1) return "max_tokens must be >= 1, got " + std::to_string(r.max_tokens);
    if (r.top_logprobs < -1 || r.top_logprobs > kMaxTopLogprobs)
        return "top_logprobs must be -1 (none), 0 (the chosen token only) or 1.." +
               std::to_string(kMaxTopLogprobs) + ", got " + std::to_string(r.top_logprobs);
    return {};
}

}  // namespace wb::core
