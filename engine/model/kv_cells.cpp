#include "model/kv_cells.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/model.h"

namespace wb::model {

KvCells::KvCells(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab)
    : cells_(n_ctx),
      seq_cells_(n_seq_max),
      n_seq_max_(n_seq_max),
      n_vocab_(n_vocab),
      n_free_(n_ctx) {
    if (n_ctx == 0 || n_seq_max == 0 || n_vocab == 0) {
        throw std::invalid_argument("KvCells: n_ctx, n_seq_max and n_vocab must be positive");
    }
}

std::string KvCells::sequence_error(const Batch& batch, std::vector<int32_t>* next_pos) const {
    std::vector<int32_t> expect(n_seq_max_);  // [n_seq_max] next position as the batch goes
    for (uint32_t q = 0; q < n_seq_max_; ++q) {
        expect[q] = static_cast<int32_t>(seq_cells_[q].size());
    }
    for (size_t i = 0; i < batch.size(); ++i) {
        const std::string at = "batch token " + std::to_string(i) + ": ";
        const int32_t s = batch.seq_id[i];
        if (s < 0 || static_cast<uint32_t>(s) >= n_seq_max_) {
            return at + "seq_id " + std::to_string(s) + " outside [0, " +
                   std::to_string(n_seq_max_) + ")";
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
    if (n > n_free_) {
        throw DecodeError("decode: KV cache full: batch needs " + std::to_string(n) + " cells, " +
                          std::to_string(n_free_) + " of " + std::to_string(cells_.size()) +
                          " are free");
    }
    std::vector<uint32_t> slots;  // [n_tokens] cell index per token
    slots.reserve(n);
    for (uint32_t c = first_free_; c < cells_.size() && slots.size() < n; ++c) {
        if (!cells_[c].used()) slots.push_back(c);
    }
    return slots;
}

void KvCells::commit(const Batch& batch, const std::vector<uint32_t>& slots) {
    if (slots.size() != batch.size() || batch.pos.size() != slots.size() ||
        batch.seq_id.size() != slots.size()) {
        throw std::invalid_argument("KvCells::commit: slots and batch differ in size");
    }
    for (uint32_t c : slots) {
        if (c >= cells_.size() || cells_[c].used()) {
            throw std::invalid_argument("KvCells::commit: cell " + std::to_string(c) +
                                        " is not a free cell");
        }
    }
    if (const std::string err = sequence_error(batch, nullptr); !err.empty()) {
        throw std::invalid_argument("KvCells::commit: " + err);
    }
    for (size_t i = 0; i < slots.size(); ++i) {
        Cell& cell = cells_[slots[i]];
        cell.pos = batch.pos[i];
        cell.seq_id = batch.seq_id[i];
        seq_cells_[static_cast<size_t>(cell.seq_id)].push_back(slots[i]);
    }
    n_free_ -= static_cast<uint32_t>(slots.size());
    while (first_free_ < cells_.size() && cells_[first_free_].used()) ++first_free_;
}

void KvCells::seq_rm(int32_t seq_id) {
    if (seq_id < 0 || static_cast<uint32_t>(seq_id) >= n_seq_max_) return;
    std::vector<uint32_t>& mine = seq_cells_[static_cast<size_t>(seq_id)];
    for (uint32_t c : mine) {
        cells_[c] = Cell{};
        first_free_ = std::min(first_free_, c);
    }
    n_free_ += static_cast<uint32_t>(mine.size());
    mine.clear();
}

void KvCells::clear() {
    std::fill(cells_.begin(), cells_.end(), Cell{});
    for (std::vector<uint32_t>& s : seq_cells_) s.clear();
    n_free_ = size();
    first_free_ = 0;
}

int32_t KvCells::next_pos(int32_t seq_id) const {
    if (seq_id < 0 || static_cast<uint32_t>(seq_id) >= n_seq_max_) {
        throw std::out_of_range("KvCells::next_pos: seq_id " + std::to_string(seq_id) +
                                " outside [0, " + std::to_string(n_seq_max_) + ")");
    }
    return static_cast<int32_t>(seq_cells_[static_cast<size_t>(seq_id)].size());
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
    std::vector<int64_t> run_start(n_seq_max_, -1);  // [n_seq_max] first entry, -1 = no run yet
    KvCellTable t;
    t.spans.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
        const auto s = static_cast<size_t>(batch.seq_id[i]);
        if (run_start[s] < 0) {
            run_start[s] = static_cast<int64_t>(t.cells.size());
            const std::vector<uint32_t>& cached = seq_cells_[s];
            t.cells.insert(t.cells.end(), cached.begin(), cached.end());
            t.cells.resize(t.cells.size() + (static_cast<size_t>(run_len[s]) - cached.size()));
        }
        const auto pos = static_cast<uint32_t>(batch.pos[i]);
        t.cells[static_cast<size_t>(run_start[s]) + pos] = slots[i];
        t.spans[2 * i] = static_cast<uint32_t>(run_start[s]);
        t.spans[2 * i + 1] = pos + 1;
    }
    return t;
}

}  // namespace wb::model
