#pragma once
// A ubatch: the tokens one forward pass processes, each with its position
// and sequence, possibly from several sequences at once (continuous
// batching puts decode tokens and prefill chunks of different requests in
// one batch). Same idea as llama.cpp's llama_batch.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wb::model {

/// Parallel arrays, one entry per token, all of length size().
struct Batch {
    std::vector<int32_t> token;   ///< [n_tokens] token ids
    std::vector<int32_t> pos;     ///< [n_tokens] position of each token in its sequence (0-based)
    std::vector<int32_t> seq_id;  ///< [n_tokens] sequence (KV-cache stream) each token belongs to
    std::vector<uint8_t> output;  ///< [n_tokens] 1 = return this token's logits

    void add(int32_t tok, int32_t position, int32_t seq, bool want_logits) {
        token.push_back(tok);
        pos.push_back(position);
        seq_id.push_back(seq);
        output.push_back(want_logits ? 1 : 0);
    }
    void clear() {
        token.clear();
        pos.clear();
        seq_id.clear();
        output.clear();
    }
    size_t size() const { return token.size(); }
    size_t n_outputs() const {
        size_t n = 0;
        for (uint8_t o : output) n += o;
        return n;
    }
};

}  // namespace wb::model
