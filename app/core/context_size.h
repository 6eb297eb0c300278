#pragma once
// The one rule for how much context a request gets when the user does not
// say: the model's training context (as llama.cpp's n_ctx = 0 does), capped,
// and the KV pool that gives that much to each running request. The CLI
// (generate, batch, plan) and the app use it, so `plan` predicts what they
// allocate.

#include <cstdint>

namespace wb::core {

/// Most tokens a request gets by default, even when the model was trained on
/// more (a 128k-token pool would not fit most machines).
inline constexpr uint32_t kMaxDefaultContext = 4096;

/// A request's default context in tokens: the model's training context
/// `n_ctx_train` (tokens; 0 = unknown, taken as 1), at most
/// kMaxDefaultContext. Never throws.
uint32_t default_context(uint32_t n_ctx_train);

/// The KV pool that gives each of `n_seq` sequences (0 taken as 1)
/// `per_sequence` tokens, in tokens (cells), capped at 2^24 cells (the
/// pool's limit). Never throws.
uint32_t pool_for(uint32_t per_sequence, uint32_t n_seq);

}  // namespace wb::core
