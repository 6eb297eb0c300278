#pragma once
// Backend-neutral KV-cache bookkeeping: which cache cell holds which
// (sequence, position). The CPU reference (cpu_model) and the Vulkan
// forward pass (vk_model) both keep their K/V tensors as
// [n_layer][n_ctx cells][n_head_kv * head_dim] and use this class to decide
// where a ubatch's tokens go and which cells each token attends to.
// Cells are a pool shared by all sequences (llama.cpp's llama_kv_cache:
// cells with pos + seq, find_slot, seq_rm), one sequence per cell.
//
// Attention does not scan the whole pool with a mask (llama.cpp's KQ_mask,
// which costs every token O(cells of ALL sequences), so a batch of B
// decoding sequences costs O(B^2)). Instead every token gets a span of a
// cell table listing its own sequence's cells by position: vLLM's
// PagedAttention block table with a block of one cell. A token at
// position p reads exactly p + 1 cells, whatever else is in the cache.
//
// Protocol for one decode(batch):
//   1. slot_ids = cells.find_slots(batch);           // validates; throws DecodeError, no change
//   2. table = cells.cell_table(batch, slot_ids);    // per token: the cells it attends to
//   3. write each token's K/V into cell slot_ids[i], run attention over its span
//   4. cells.commit(batch, slot_ids);                // only after the pass succeeded
// find_slots and cell_table are const, so a failure before step 4 leaves
// the bookkeeping exactly as it was (the K/V bytes written to free cells in
// step 3 are harmless: no table lists a free cell).

#include <cstdint>
#include <string>
#include <vector>

#include "model/batch.h"

namespace wb::model {

/// The cells each token of a ubatch attends to (see the file comment).
struct KvCellTable {
    /// [n_entries] cache cell indices. For each sequence of the batch, in
    /// order of first appearance, a run of its cells ordered by position:
    /// positions 0 .. the last position the batch gives that sequence (the
    /// cached cells, then the batch's own slots).
    std::vector<uint32_t> cells;
    /// [n_tokens, 2] row-major (first entry in `cells`, count): token i
    /// attends to cells[first .. first + count), count = pos[i] + 1, i.e. its
    /// sequence's cells with position <= its own (causal mask by construction).
    /// Attention relies on the position order: a sliding window of w
    /// positions is the span's last w entries (AttnParams::window).
    std::vector<uint32_t> spans;
};

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
    /// batch and state). Throws std::invalid_argument, changing nothing, on a
    /// size mismatch, a slot that is not free, or a token whose position does
    /// not continue its sequence.
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

    /// The cell table of `batch` placed in `slot_ids` (from find_slots on
    /// this same batch and state), as if committed. Every span has at least
    /// one entry (the token's own cell), so a softmax over it is well
    /// defined. Size: sum over the batch's sequences of (last pos + 1)
    /// entries, at most n_ctx. Throws std::invalid_argument if sizes differ
    /// or a batch position does not continue its sequence.
    KvCellTable cell_table(const Batch& batch, const std::vector<uint32_t>& slot_ids) const;

  private:
    /// Empty when every token's seq_id is in range and its position is the
    /// next one of its sequence (cached cells, then earlier batch tokens);
    /// else what is wrong and at which token. `next_pos` (optional) gets
    /// [n_seq_max] each sequence's length once the batch is in. Expects
    /// batch arrays of equal length.
    std::string sequence_error(const Batch& batch, std::vector<int32_t>* next_pos) const;

    std::vector<Cell> cells_;                       // [n_ctx]
    std::vector<std::vector<uint32_t>> seq_cells_;  // [n_seq_max][next_pos] cell of each position
    uint32_t n_seq_max_;
    uint32_t n_vocab_;
    uint32_t n_free_;
    uint32_t first_free_ = 0;  // no free cell below this index (search hint)
};

}  // namespace wb::model
