#include "kv/kv_cells.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wb::model {

namespace {

/// Blocks of the pool, after checking the constructor's arguments (the
/// pool member is built before the constructor body could check them).
uint32_t checked_blocks(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab, uint32_t bs) {
    if (n_ctx == 0 || n_seq_max == 0 || n_vocab == 0 || bs == 0) {
        throw std::invalid_argument(
            "KvCells: n_ctx, n_seq_max, n_vocab and block_size must be positive");
    }
    return KvCells::pool_cells(n_ctx, bs) / bs;
}

}  // namespace

uint32_t KvCells::pool_cells(uint32_t n_ctx, uint32_t block_size) {
    if (n_ctx == 0 || block_size == 0) return 0;
    return (n_ctx + block_size - 1) / block_size * block_size;
}

KvCells::KvCells(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab, uint32_t block_size)
    : pool_(checked_blocks(n_ctx, n_seq_max, n_vocab, block_size), block_size),
      seqs_(n_seq_max),
      n_vocab_(n_vocab) {}

const KvCells::Seq& KvCells::seq(int32_t seq_id, const char* who) const {
    if (seq_id < 0 || static_cast<size_t>(seq_id) >= seqs_.size()) {
        throw std::out_of_range(std::string("KvCells::") + who + ": seq_id " +
                                std::to_string(seq_id) + " outside [0, " +
                                std::to_string(seqs_.size()) + ")");
    }
    return seqs_[static_cast<size_t>(seq_id)];
}

std::string KvCells::sequence_error(const Batch& batch, std::vector<int32_t>* next_pos) const {
    std::vector<int32_t> expect(seqs_.size());  // [n_seq_max] next position as the batch goes
    for (size_t q = 0; q < seqs_.size(); ++q) expect[q] = static_cast<int32_t>(seqs_[q].n_tokens);
    for (size_t i = 0; i < batch.size(); ++i) {
        const std::string at = "batch token " + std::to_string(i) + ": ";
        const int32_t s = batch.seq_id[i];
        if (s < 0 || static_cast<size_t>(s) >= seqs_.size()) {
            return at + "seq_id " + std::to_string(s) + " outside [0, " +
                   std::to_string(seqs_.size()) + ")";
        }
        if (batch.pos[i] != expect[static_cast<size_t>(s)]) {
            return at + "position " + std::to_string(batch.pos[i]) + " of sequence " +
                   std::to_string(s) + " is not its next position " +
                   std::to_string(expect[static_cast<size_t>(s)]);
        }
        ++expect[static_cast<size_t>(s)];
    }
    if (next_pos) *next_pos = std::move(expect);
    return {};
}

std::vector<uint32_t> KvCells::place(const Batch& batch, std::vector<uint32_t>* new_blocks) const {
    const uint32_t bs = pool_.block_size();
    // New blocks in batch order: a token at a position past its sequence's
    // blocks (and past the blocks given to its earlier batch tokens) opens one.
    std::vector<uint32_t> have(seqs_.size());  // [n_seq_max] blocks held or given so far
    for (size_t q = 0; q < seqs_.size(); ++q) {
        have[q] = static_cast<uint32_t>(seqs_[q].blocks.size());
    }
    uint32_t n_new = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        const auto q = static_cast<size_t>(batch.seq_id[i]);
        if (static_cast<uint32_t>(batch.pos[i]) / bs >= have[q]) {
            ++have[q];
            ++n_new;
        }
    }
    const std::vector<uint32_t> fresh = pool_.peek(n_new);  // [n_new] blocks in hand-out order
    if (fresh.size() < n_new) {
        throw DecodeError("decode: KV cache full: batch of " + std::to_string(batch.size()) +
                          " tokens needs " + std::to_string(n_new) + " new blocks of " +
                          std::to_string(bs) + " cells, " + std::to_string(pool_.n_available()) +
                          " of " + std::to_string(pool_.n_blocks()) + " are available");
    }
    std::vector<std::vector<uint32_t>> table(seqs_.size());  // new blocks per sequence
    std::vector<uint32_t> slots(batch.size());
    size_t used = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        const auto q = static_cast<size_t>(batch.seq_id[i]);
        const auto pos = static_cast<uint32_t>(batch.pos[i]);
        const Seq& s = seqs_[q];
        const uint32_t bi = pos / bs;
        uint32_t block;
        if (bi < s.blocks.size()) {
            block = s.blocks[bi];
        } else {
            if (bi - s.blocks.size() >= table[q].size()) table[q].push_back(fresh[used++]);
            block = table[q][bi - s.blocks.size()];
        }
        slots[i] = block * bs + pos % bs;
    }
    if (new_blocks) *new_blocks = fresh;
    return slots;
}

std::vector<uint32_t> KvCells::find_slots(const Batch& batch) const {
    const size_t n = batch.token.size();
    if (n == 0) throw DecodeError("decode: empty batch");
    if (batch.pos.size() != n || batch.seq_id.size() != n || batch.output.size() != n) {
        throw DecodeError("decode: batch arrays differ in length (token " + std::to_string(n) +
                          ", pos " + std::to_string(batch.pos.size()) + ", seq_id " +
                          std::to_string(batch.seq_id.size()) + ", output " +
                          std::to_string(batch.output.size()) + ")");
    }
    for (size_t i = 0; i < n; ++i) {
        if (batch.token[i] < 0 || static_cast<uint32_t>(batch.token[i]) >= n_vocab_) {
            throw DecodeError("decode: batch token " + std::to_string(i) + ": token id " +
                              std::to_string(batch.token[i]) + " outside the vocabulary [0, " +
                              std::to_string(n_vocab_) + ")");
        }
    }
    if (const std::string err = sequence_error(batch, nullptr); !err.empty()) {
        throw DecodeError("decode: " + err);
    }
    return place(batch, nullptr);
}

void KvCells::commit(const Batch& batch, const std::vector<uint32_t>& slots) {
    if (slots.size() != batch.size() || batch.pos.size() != slots.size() ||
        batch.seq_id.size() != slots.size() || batch.token.size() != slots.size()) {
        throw std::invalid_argument("KvCells::commit: slots and batch differ in size");
    }
    if (const std::string err = sequence_error(batch, nullptr); !err.empty()) {
        throw std::invalid_argument("KvCells::commit: " + err);
    }
    std::vector<uint32_t> fresh;
    std::vector<uint32_t> want;
    try {
        want = place(batch, &fresh);
    } catch (const DecodeError& e) {
        throw std::invalid_argument(std::string("KvCells::commit: ") + e.what());
    }
    if (want != slots) {
        throw std::invalid_argument(
            "KvCells::commit: slots are not the cells find_slots chooses for this batch");
    }
    const uint32_t bs = pool_.block_size();
    size_t used = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        Seq& s = seqs_[static_cast<size_t>(batch.seq_id[i])];
        if (s.n_tokens % bs == 0) {  // a new block starts (find_slots gave it in this order)
            const uint32_t b = fresh[used++];
            pool_.take(b);
            s.blocks.push_back(b);
        }
        const uint32_t b = s.blocks.back();
        pool_.append(b, batch.token[i]);
        ++s.n_tokens;
        if (pool_.fill(b) == bs) {
            // Full: others with the same prefix may share it from now on.
            pool_.publish_full(b, s.prefix_hash);
            s.prefix_hash = KvBlockPool::hash_block(s.prefix_hash, pool_.tokens(b));
        }
    }
}

void KvCells::seq_rm(int32_t seq_id) {
    if (seq_id < 0 || static_cast<size_t>(seq_id) >= seqs_.size()) return;
    Seq& s = seqs_[static_cast<size_t>(seq_id)];
    if (!s.blocks.empty()) {
        const uint32_t last = s.blocks.back();
        const uint32_t fill = pool_.fill(last);
        if (fill > 0 && fill < pool_.block_size()) pool_.publish_partial(last, s.prefix_hash);
    }
    for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) pool_.release(*it);
    s = Seq{};  // n_reused back to 0 too
}

void KvCells::clear() {
    pool_.clear();
    for (Seq& s : seqs_) s = Seq{};
}

uint32_t KvCells::seq_reuse_cached(int32_t seq_id, std::span<const int32_t> tokens, uint32_t limit,
                                   bool take_over) {
    (void)seq(seq_id, "seq_reuse_cached");
    Seq& s = seqs_[static_cast<size_t>(seq_id)];
    const uint32_t bs = pool_.block_size();
    limit = std::min<uint32_t>(limit, static_cast<uint32_t>(tokens.size()));
    if (s.n_tokens % bs != 0 || s.n_tokens >= limit) return 0;
    const uint32_t start = s.n_tokens;
    // Whole blocks, shared.
    while (s.n_tokens + bs <= limit) {
        const std::span<const int32_t> blk = tokens.subspan(s.n_tokens, bs);
        const int64_t b = pool_.find_full(s.prefix_hash, blk);
        if (b < 0) break;
        pool_.share(static_cast<uint32_t>(b));
        s.blocks.push_back(static_cast<uint32_t>(b));
        s.n_tokens += bs;
        s.prefix_hash = KvBlockPool::hash_block(s.prefix_hash, blk);
    }
    // Then the best unheld block after them, taken over.
    if (take_over && s.n_tokens < limit) {
        const std::span<const int32_t> rest =
            tokens.subspan(s.n_tokens, std::min(bs, limit - s.n_tokens));
        const auto [b, m] = pool_.find_take_over(s.prefix_hash, rest);
        if (b >= 0) {
            pool_.take_cached(static_cast<uint32_t>(b));
            s.blocks.push_back(static_cast<uint32_t>(b));
            s.n_tokens += m;
        }
    }
    s.n_reused = s.n_tokens;
    return s.n_tokens - start;
}

void KvCells::seq_truncate(int32_t seq_id, uint32_t n_keep) {
    (void)seq(seq_id, "seq_truncate");
    Seq& s = seqs_[static_cast<size_t>(seq_id)];
    const uint32_t bs = pool_.block_size();
    auto refuse = [&](const std::string& why) {
        throw std::invalid_argument("KvCells::seq_truncate: sequence " + std::to_string(seq_id) +
                                    ", n_keep " + std::to_string(n_keep) + ": " + why);
    };
    if (n_keep > s.n_tokens) refuse("past its length " + std::to_string(s.n_tokens));
    if (n_keep == s.n_tokens) return;
    if (n_keep < s.n_reused) {
        refuse("cuts into the " + std::to_string(s.n_reused) +
               " positions reused from the prefix cache");
    }
    const size_t keep_blocks = (n_keep + bs - 1) / bs;  // blocks still holding a kept position
    // The first block that changes: the boundary block when it is cut,
    // else the first one dropped. Check every one before changing anything.
    const size_t first_changed = n_keep % bs != 0 ? keep_blocks - 1 : keep_blocks;
    for (size_t i = first_changed; i < s.blocks.size(); ++i) {
        if (pool_.ref(s.blocks[i]) != 1) {
            refuse("block " + std::to_string(s.blocks[i]) + " (positions from " +
                   std::to_string(i * bs) + ") is shared with another sequence");
        }
    }
    while (s.blocks.size() > keep_blocks) {
        const uint32_t b = s.blocks.back();
        pool_.truncate(b, 0);  // out of the prefix cache, so release frees it
        pool_.release(b);
        s.blocks.pop_back();
    }
    if (n_keep % bs != 0) pool_.truncate(s.blocks.back(), n_keep % bs);
    s.n_tokens = n_keep;
    s.prefix_hash = KvBlockPool::kRootHash;
    for (uint32_t i = 0; i < n_keep / bs; ++i) {
        s.prefix_hash = KvBlockPool::hash_block(s.prefix_hash, pool_.tokens(s.blocks[i]));
    }
}

uint32_t KvCells::seq_room_without_eviction(int32_t seq_id) const {
    const Seq& s = seq(seq_id, "seq_room_without_eviction");
    const uint32_t bs = pool_.block_size();
    const auto in_last = static_cast<uint32_t>(s.blocks.size() * bs - s.n_tokens);
    return in_last + pool_.n_free() * bs;
}

uint64_t KvCells::seq_prefix_hash(int32_t seq_id) const {
    return seq(seq_id, "seq_prefix_hash").prefix_hash;
}

uint32_t KvCells::blocks_needed(int32_t seq_id, uint32_t n_tokens) const {
    const Seq& s = seq(seq_id, "blocks_needed");
    const uint32_t bs = pool_.block_size();
    const uint64_t want = (uint64_t{s.n_tokens} + n_tokens + bs - 1) / bs;
    return want > s.blocks.size() ? static_cast<uint32_t>(want - s.blocks.size()) : 0;
}

int32_t KvCells::next_pos(int32_t seq_id) const {
    return static_cast<int32_t>(seq(seq_id, "next_pos").n_tokens);
}

const std::vector<uint32_t>& KvCells::seq_blocks(int32_t seq_id) const {
    return seq(seq_id, "seq_blocks").blocks;
}

KvCellTable KvCells::cell_table(const Batch& batch, const std::vector<uint32_t>& slots) const {
    const size_t n = batch.size();
    if (slots.size() != n || batch.pos.size() != n || batch.seq_id.size() != n) {
        throw std::invalid_argument("KvCells::cell_table: slots and batch differ in size");
    }
    // Pass 1: every token continues its sequence; run_len[s] = positions of
    // sequence s once the batch is in.
    std::vector<int32_t> run_len;  // [n_seq_max]
    if (const std::string err = sequence_error(batch, &run_len); !err.empty()) {
        throw std::invalid_argument("KvCells::cell_table: " + err);
    }
    // Pass 2: one run per sequence in order of first appearance (its cached
    // cells, then room for its batch slots), and each token's span.
    std::vector<int64_t> run_start(seqs_.size(), -1);  // [n_seq_max] first entry, -1 = no run yet
    KvCellTable t;
    t.spans.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
        const auto q = static_cast<size_t>(batch.seq_id[i]);
        if (run_start[q] < 0) {
            run_start[q] = static_cast<int64_t>(t.cells.size());
            const Seq& s = seqs_[q];
            for (uint32_t p = 0; p < s.n_tokens; ++p) t.cells.push_back(cell_of(s, p));
            t.cells.resize(t.cells.size() + (static_cast<size_t>(run_len[q]) - s.n_tokens));
        }
        const auto pos = static_cast<uint32_t>(batch.pos[i]);
        t.cells[static_cast<size_t>(run_start[q]) + pos] = slots[i];
        t.spans[2 * i] = static_cast<uint32_t>(run_start[q]);
        t.spans[2 * i + 1] = pos + 1;
    }
    return t;
}

}  // namespace wb::model
