#pragma once
// Draft tokens from a second, cheaper model that shares the target's
// vocabulary (a smaller model of the same family, or a lower-bit quant of
// the target itself), decoded greedily (Leviathan et al. 2023; llama.cpp's
// --model-draft). The draft keeps its own KV: one sequence of the draft
// model per target sequence, same id, rolled back to the common prefix
// with the target's history (KvCells::seq_truncate) before each proposal,
// so only the tokens the target added since are fed.

#include <map>

#include "model/model.h"
#include "speculative/drafter.h"
#include "tokenizer/vocab.h"

namespace wb::speculative {

/// Throws std::invalid_argument when `draft`'s vocabulary is not
/// `target`'s: the sizes differ, or token `id` has another piece; the
/// message names the first differing id and both pieces ("draft vocabulary
/// differs from the target's at token 17: target 'ing', draft 'ed'").
void check_same_vocab(const tokenizer::Vocab& target, const tokenizer::Vocab& draft);

class DraftModelDrafter : public Drafter {
  public:
    /// `draft` (must outlive this) with its context's n_seq_max covering
    /// every target sequence id passed to propose. `label` names it in
    /// stats (its file and version). Check the vocabularies with
    /// check_same_vocab first.
    DraftModelDrafter(model::Model& draft, std::string label);
    /// Up to k greedy tokens of the draft after `history`. Empty when `seq`
    /// is outside the draft's n_seq_max, when history is empty, or when the
    /// draft's context or KV pool has no room (it never throws for that:
    /// the target then decodes without a draft). Rethrows other decode
    /// errors (NaN logits are drafted as the arg-max, harmlessly).
    std::vector<int32_t> propose(int32_t seq, std::span<const int32_t> history,
                                 uint32_t k) override;
    void release(int32_t seq) override;
    std::string name() const override { return label_; }

  private:
    model::Model& draft_;
    std::string label_;
    std::map<int32_t, std::vector<int32_t>> fed_;  // seq -> tokens in the draft's KV, by position
    std::vector<float> logits_;
};

}  // namespace wb::speculative
