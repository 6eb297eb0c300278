#include "speculative/draft_model_drafter.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/prefill.h"
#include "sampling/sampler.h"

namespace wb::speculative {

void check_same_vocab(const tokenizer::Vocab& target, const tokenizer::Vocab& draft) {
    const int32_t n = std::min(target.n_tokens(), draft.n_tokens());
    for (int32_t id = 0; id < n; ++id) {
        const std::string a = target.token_to_piece(id, true), b = draft.token_to_piece(id, true);
        if (a != b) {
            throw std::invalid_argument("draft vocabulary differs from the target's at token " +
                                        std::to_string(id) + ": target '" + a + "', draft '" + b +
                                        "'");
        }
    }
    if (target.n_tokens() != draft.n_tokens()) {
        throw std::invalid_argument("draft vocabulary differs from the target's at token " +
                                    std::to_string(n) + ": target has " +
                                    std::to_string(target.n_tokens()) + " tokens, draft " +
                                    std::to_string(draft.n_tokens()));
    }
}

DraftModelDrafter::DraftModelDrafter(model::Model& draft, std::string label)
    : draft_(draft), label_(std::move(label)) {}

void DraftModelDrafter::release(int32_t seq) {
    if (fed_.erase(seq) > 0) draft_.seq_rm(seq);
}

std::vector<int32_t> DraftModelDrafter::propose(int32_t seq, std::span<const int32_t> history,
                                                uint32_t k) {
    model::KvCells& kv = draft_.kv_cells();
    if (k == 0 || history.empty() || seq < 0 || static_cast<uint32_t>(seq) >= kv.n_seq_max())
        return {};
    const uint32_t n_ctx = draft_.context().n_ctx;
    if (history.size() + k > n_ctx) return {};
    std::vector<int32_t>& fed = fed_[seq];
    // Keep the common prefix, but recompute at least the last token: its
    // logits give the first draft token.
    const auto common = static_cast<size_t>(
        std::mismatch(fed.begin(), fed.end(), history.begin(), history.end()).first - fed.begin());
    const size_t keep = std::min(common, history.size() - 1);
    kv.seq_truncate(seq, static_cast<uint32_t>(keep));
    fed.resize(keep);
    std::vector<int32_t> out;
    try {
        const auto todo = history.subspan(keep);
        model::prefill(draft_, todo, seq, static_cast<int32_t>(keep), model::kDefaultUbatch,
                       logits_);
        fed.insert(fed.end(), todo.begin(), todo.end());
        const size_t n_vocab = draft_.hparams().n_vocab;
        for (;;) {
            const int32_t t =
                sampling::Sampler::greedy(std::span<const float>(logits_).first(n_vocab));
            out.push_back(t);
            if (out.size() == k) break;
            model::Batch b;
            b.add(t, static_cast<int32_t>(fed.size()), seq, true);
            draft_.decode(b, logits_);
            fed.push_back(t);
        }
    } catch (const model::DecodeError&) {
        // No room in the draft's pool: draft what there is. fed is what the
        // KV holds (prefill's earlier ubatches may be in; resync next time).
        fed.resize(std::min<size_t>(fed.size(), static_cast<size_t>(kv.next_pos(seq))));
        kv.seq_truncate(seq, static_cast<uint32_t>(fed.size()));
    }
    return out;
}

}  // namespace wb::speculative
