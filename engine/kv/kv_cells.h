#pragma once
// The KV pool: backend-neutral bookkeeping of which cache cell holds which
// (sequence, position). The CPU reference (ref_model) and the Vulkan
// forward pass (vk_model) both keep their K/V tensors as
// [n_layer][size() cells][n_head_kv * head_dim] and use this class to decide
// where a ubatch's tokens go and which cells each token attends to.
//
// Cells come in blocks of block_size (KvBlockPool, kv_block_pool.h), shared
// by all sequences: a sequence owns a list of blocks (its block table, as
// in vLLM's PagedAttention), position p living in cell
// blocks[p / block_size] * block_size + p % block_size. One sequence may
// fill the whole pool; full blocks whose content another sequence needs
// (the same prompt prefix) are shared by reference through the prefix
// cache (seq_reuse_cached).
//
// Attention does not scan the whole pool with a mask (llama.cpp's KQ_mask,
// which costs every token O(cells of ALL sequences), so a batch of B
// decoding sequences costs O(B^2)). Instead every token gets a span of a
// cell table listing its own sequence's cells by position: the block table
// expanded to one entry per cell, so the shaders need not know the block
// size. A token at position p reads exactly p + 1 cells, whatever else is
// in the pool and whichever physical cells its blocks are.
//
// Protocol for one decode(batch):
//   1. slot_ids = cells.find_slots(batch);           // validates; throws DecodeError, no change
//   2. table = cells.cell_table(batch, slot_ids);    // per token: the cells it attends to
//   3. write each token's K/V into cell slot_ids[i], run attention over its span
//   4. cells.commit(batch, slot_ids);                // only after the pass succeeded
// find_slots and cell_table are const, so a failure before step 4 leaves
// the bookkeeping exactly as it was (the K/V bytes written in step 3 are
// harmless: they went to blocks no sequence holds, or to cells of a
// sequence's own last block past its length, which no table lists yet).
// The blocks find_slots hands out are the ones commit takes: the cell
// numbers may point into evictable cached blocks, whose content is dropped
// from the prefix cache only at commit.
// Speculative decoding commits draft tokens and then takes the rejected
// ones back with seq_truncate, which restores the pool exactly as long as
// the draft used no evicted block (seq_room_without_eviction).

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kv/batch.h"
#include "kv/kv_block_pool.h"

namespace wb::model {

/// Thrown by decode() when the batch cannot be placed: not enough free KV
/// cells, a position that is not the next one of its sequence, a token id
/// outside the vocabulary, or a sequence id >= n_seq_max. The cache is left
/// as it was before the call.
class DecodeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

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
    /// Cells per block when the context does not say (vLLM's default on GPUs).
    static constexpr uint32_t kDefaultBlockSize = 16;

    /// Cells of the pool of an `n_ctx`-token context: n_ctx rounded up to
    /// whole blocks (the rows each K/V buffer must have). 0 when either is 0.
    static uint32_t pool_cells(uint32_t n_ctx, uint32_t block_size);

    /// A pool of pool_cells(n_ctx, block_size) cells shared by all
    /// sequences, sequence ids 0..n_seq_max-1, token ids 0..n_vocab-1.
    /// Throws std::invalid_argument if any is 0.
    KvCells(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab,
            uint32_t block_size = kDefaultBlockSize);

    /// Chooses a cell for every token of `batch` (result [n_tokens], cell
    /// indices, in batch order) without changing anything: a position
    /// inside one of its sequence's blocks goes there; a sequence that
    /// needs a new block gets the next of KvBlockPool::peek (free blocks by
    /// lowest id, then the least recently used cached ones). Throws
    /// DecodeError, naming the token index and the value, when: the batch
    /// is empty or its arrays differ in length; a token id is outside
    /// [0, n_vocab); a seq_id is outside [0, n_seq_max); a position is not
    /// the next one of its sequence (the sequence's tokens must continue at
    /// next_pos(seq) and be consecutive in batch order); or the batch needs
    /// more new blocks than the pool has available ("KV cache full").
    std::vector<uint32_t> find_slots(const Batch& batch) const;

    /// Records the batch's tokens in `slot_ids` (from find_slots on this same
    /// batch and state): takes the new blocks, writes the token ids, and
    /// puts every block that became full into the prefix cache. Throws
    /// std::invalid_argument, changing nothing, on a size mismatch, a token
    /// whose position does not continue its sequence, or slots other than
    /// the ones find_slots chooses now.
    void commit(const Batch& batch, const std::vector<uint32_t>& slot_ids);

    /// Ends sequence `seq_id`: its last, partly filled block goes into the
    /// prefix cache for a later take-over, and every block it holds is given
    /// back, last block first (so the LRU evicts a sequence's tail before
    /// its head). Its next position becomes 0. Out-of-range ids are ignored.
    void seq_rm(int32_t seq_id);

    /// Rolls sequence `seq_id` back to its first `n_keep` positions, as if
    /// the later tokens had never been committed (speculative decoding's
    /// rejected draft tail): blocks wholly past n_keep go back to the free
    /// set (not the prefix cache: plain decoding never put them there), the
    /// block holding position n_keep - 1 keeps n_keep % block_size tokens
    /// and leaves the prefix cache if commit() had published it full, and
    /// the sequence's prefix hash is recomputed over its remaining full
    /// blocks. K/V bytes past the new length stay in the buffers but no
    /// cell table lists them. The pool equals one that never saw the tail
    /// only if the tail's blocks came from the free set, not by evicting
    /// cached ones: keep the tail within seq_room_without_eviction().
    /// Throws std::invalid_argument, changing nothing, naming the sequence,
    /// n_keep and the reason, when n_keep exceeds the sequence's length,
    /// when a block that would be cut or dropped is shared with another
    /// sequence, or when n_keep cuts into positions seq_reuse_cached took
    /// from the prefix cache (their blocks were cached before). Throws
    /// std::out_of_range for a bad id.
    void seq_truncate(int32_t seq_id, uint32_t n_keep);

    /// Positions sequence `seq_id` can still grow using only the free cells
    /// of its last block and blocks in the free set, i.e. without evicting
    /// cached content (which a later seq_truncate could not restore).
    /// Throws std::out_of_range for a bad id.
    uint32_t seq_room_without_eviction(int32_t seq_id) const;

    /// Frees every block and empties the prefix cache.
    void clear();

    /// Reuses cached K/V for sequence `seq_id`, whose whole token list
    /// (from position 0) is `tokens`: appends the prefix cache's blocks
    /// that continue the sequence with tokens[next_pos .. limit): full
    /// blocks shared by reference, then, when `take_over` is true, the
    /// longest cached tail of an ended sequence (a partly filled block)
    /// that the tokens after them continue, taken over without copying
    /// (the sequence writes on into it). Returns how many
    /// positions were added (0 when nothing matches, or when the sequence
    /// ends inside a block). The caller guarantees tokens[0 .. next_pos) are
    /// the sequence's tokens. A fresh request passes limit = prompt length
    /// - 1, so its last prompt token is computed and gives logits.
    uint32_t seq_reuse_cached(int32_t seq_id, std::span<const int32_t> tokens, uint32_t limit,
                              bool take_over = true);

    /// Hash of sequence `seq_id`'s prefix up to its last full block
    /// (KvBlockPool::kRootHash when it has none). Throws std::out_of_range
    /// for a bad id.
    uint64_t seq_prefix_hash(int32_t seq_id) const;

    /// New blocks sequence `seq_id` needs to grow by `n_tokens` positions
    /// (0 while they fit in its last block). Throws std::out_of_range for
    /// a bad id.
    uint32_t blocks_needed(int32_t seq_id, uint32_t n_tokens) const;

    /// Cells of blocks no sequence holds (free or only cached): how many
    /// tokens new sequences could still store, a multiple of block_size().
    uint32_t n_free() const { return pool_.n_available() * pool_.block_size(); }
    /// Blocks no sequence holds (free or only cached).
    uint32_t n_free_blocks() const { return pool_.n_available(); }
    /// Blocks no sequence holds whose content is kept in the prefix cache.
    uint32_t n_cached_blocks() const { return pool_.n_cached_free(); }
    /// Total cells (pool_cells(n_ctx, block_size)).
    uint32_t size() const { return pool_.n_blocks() * pool_.block_size(); }
    uint32_t block_size() const { return pool_.block_size(); }
    uint32_t n_blocks() const { return pool_.n_blocks(); }
    uint32_t n_seq_max() const { return static_cast<uint32_t>(seqs_.size()); }
    /// Position the next token of `seq_id` must have (0 for an empty
    /// sequence). Throws std::out_of_range for a bad id.
    int32_t next_pos(int32_t seq_id) const;
    /// Sequence `seq_id`'s block table, by position. Throws std::out_of_range.
    const std::vector<uint32_t>& seq_blocks(int32_t seq_id) const;
    /// The blocks and the prefix cache (read-only).
    const KvBlockPool& pool() const { return pool_; }

    /// The cell table of `batch` placed in `slot_ids` (from find_slots on
    /// this same batch and state), as if committed. Every span has at least
    /// one entry (the token's own cell), so a softmax over it is well
    /// defined. Size: sum over the batch's sequences of (last pos + 1)
    /// entries. Throws std::invalid_argument if sizes differ or a batch
    /// position does not continue its sequence.
    KvCellTable cell_table(const Batch& batch, const std::vector<uint32_t>& slot_ids) const;

  private:
    struct Seq {
        std::vector<uint32_t> blocks;  // block table: position p is in blocks[p / block_size]
        uint32_t n_tokens = 0;         // next position
        uint64_t prefix_hash = KvBlockPool::kRootHash;  // hash up to its last full block
        uint32_t n_reused = 0;  // positions taken from the prefix cache (seq_reuse_cached)
    };

    /// Empty when every token's seq_id is in range and its position is the
    /// next one of its sequence (cached cells, then earlier batch tokens);
    /// else what is wrong and at which token. `next_pos` (optional) gets
    /// [n_seq_max] each sequence's length once the batch is in. Expects
    /// batch arrays of equal length.
    std::string sequence_error(const Batch& batch, std::vector<int32_t>* next_pos) const;
    /// Cells for a validated batch, and (optionally) the new blocks taken
    /// in batch order; throws DecodeError when the pool is short.
    std::vector<uint32_t> place(const Batch& batch, std::vector<uint32_t>* new_blocks) const;
    const Seq& seq(int32_t seq_id, const char* who) const;
    uint32_t cell_of(const Seq& s, uint32_t pos) const {
        return s.blocks[pos / pool_.block_size()] * pool_.block_size() + pos % pool_.block_size();
    }

    KvBlockPool pool_;
    std::vector<Seq> seqs_;  // [n_seq_max]
    uint32_t n_vocab_;
};

}  // namespace wb::model
