#pragma once
// Backend-neutral KV-cache bookkeeping: which cache cell holds which
// (sequence, position). The CPU reference (cpu_llama) and the Vulkan
// forward pass (vk_llama) both keep their K/V tensors as
// [n_layer][n_ctx cells][n_head_kv * head_dim] and use this class to decide
// where a ubatch's tokens go and which cells each token may attend to.
// Same idea as llama.cpp's llama_kv_cache (cells with pos + seq set,
// find_slot, seq_rm, the KQ_mask), reduced to one sequence per cell.
//
// Protocol for one decode(batch):
//   1. slot_ids = cells.find_slots(batch);           // validates; throws DecodeError, no change
//   2. n_kv  = cells.n_kv(slot_ids);                 // cells attention must scan: [0, n_kv)
//   3. mask  = cells.build_mask(batch, slot_ids, n_kv);
//   4. write each token's K/V into cell slot_ids[i], run attention with mask
//   5. cells.commit(batch, slot_ids);                // only after the pass succeeded
// find_slots and build_mask are const, so a failure before step 5 leaves
// the bookkeeping exactly as it was (the K/V bytes written to free cells in
// step 4 are harmless: free cells are masked out).

#include <cstdint>
#include <vector>

#include "model/batch.h"

namespace wb::model {

class KvCells {
  public:
    /// One cache cell. Free when seq_id < 0.
    struct Cell {
        int32_t pos = -1;     ///< position of the token in its sequence
        int32_t seq_id = -1;  ///< owning sequence, -1 = free
        bool used() const { return seq_id >= 0; }
    };

    /// `n_ctx` cells (tokens, shared by all sequences), sequence ids
    /// 0..n_seq_max-1, token ids 0..n_vocab-1. Throws std::invalid_argument
    /// if any is 0.
    KvCells(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab);

    /// Chooses a cell for every token of `batch` (result [n_tokens], cell
    /// indices, lowest free cells first, in batch order) without changing
    /// anything. Throws DecodeError, naming the token index and the value,
    /// when: the batch is empty or its arrays differ in length; a token id
    /// is outside [0, n_vocab); a seq_id is outside [0, n_seq_max); a
    /// position is not the next one of its sequence (the sequence's tokens
    /// must continue at next_pos(seq) and be consecutive in batch order);
    /// or fewer than n_tokens cells are free.
    std::vector<uint32_t> find_slots(const Batch& batch) const;

    /// Records the batch's tokens in `slot_ids` (from find_slots on this same
    /// batch and state). Throws std::invalid_argument on a size mismatch or
    /// a slot that is not free.
    void commit(const Batch& batch, const std::vector<uint32_t>& slot_ids);

    /// Frees every cell of sequence `seq_id`; its next position becomes 0.
    /// Out-of-range ids are ignored (nothing to free).
    void seq_rm(int32_t seq_id);

    /// Frees every cell.
    void clear();

    /// Cells not used by any sequence.
    uint32_t n_free() const { return n_free_; }
    /// Total cells (n_ctx).
    uint32_t size() const { return static_cast<uint32_t>(cells_.size()); }
    uint32_t n_seq_max() const { return n_seq_max_; }
    const Cell& cell(uint32_t i) const { return cells_.at(i); }
    /// Position the next token of `seq_id` must have (0 for an empty
    /// sequence). Throws std::out_of_range for a bad id.
    int32_t next_pos(int32_t seq_id) const;

    /// Number of leading cells attention has to look at once `slot_ids` are
    /// filled: 1 + the highest index among used cells and `slot_ids`. Cells at
    /// and beyond it are free and would be masked anyway.
    uint32_t n_kv(const std::vector<uint32_t>& slot_ids) const;

    /// The attention mask for `batch` placed in `slot_ids`, as if committed:
    /// f32 [n_tokens, n_kv] row-major; element (i, j) is 0 when cell j holds
    /// a token of the same sequence as token i with pos <= pos of token i
    /// (the cells in `slot_ids` count as holding the batch's own tokens), and
    /// -INFINITY otherwise (free cells, other sequences, the future). Every
    /// row has at least one 0 (the token's own cell), so a softmax over a
    /// row is well defined. llama.cpp builds the same KQ_mask.
    /// Throws std::invalid_argument if n_kv < n_kv(slot_ids) or sizes differ.
    std::vector<float> build_mask(const Batch& batch, const std::vector<uint32_t>& slot_ids,
                                  uint32_t n_kv) const;

  private:
    std::vector<Cell> cells_;            // [n_ctx]
    std::vector<int32_t> seq_next_pos_;  // [n_seq_max] next position per sequence
    uint32_t n_seq_max_;
    uint32_t n_vocab_;
    uint32_t n_free_;
};

}  // namespace wb::model
