#include "model/kv_cells.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/model.h"

namespace wb::model {

KvCells::KvCells(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_vocab)
    : cells_(n_ctx),
      seq_next_pos_(n_seq_max, 0),
      n_seq_max_(n_seq_max),
      n_vocab_(n_vocab),
      n_free_(n_ctx) {
    if (n_ctx == 0 || n_seq_max == 0 || n_vocab == 0) {
        throw std::invalid_argument("KvCells: n_ctx, n_seq_max and n_vocab must be positive");
    }
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
    std::vector<int32_t> expect = seq_next_pos_;  // [n_seq_max] next position as the batch goes
    for (size_t i = 0; i < n; ++i) {
        const std::string at = "decode: batch token " + std::to_string(i) + ": ";
        if (batch.token[i] < 0 || static_cast<uint32_t>(batch.token[i]) >= n_vocab_) {
            throw DecodeError(at + "token id " + std::to_string(batch.token[i]) +
                              " outside the vocabulary [0, " + std::to_string(n_vocab_) + ")");
        }
        const int32_t s = batch.seq_id[i];
        if (s < 0 || static_cast<uint32_t>(s) >= n_seq_max_) {
            throw DecodeError(at + "seq_id " + std::to_string(s) + " outside [0, " +
                              std::to_string(n_seq_max_) + ")");
        }
        if (batch.pos[i] != expect[static_cast<size_t>(s)]) {
            throw DecodeError(at + "position " + std::to_string(batch.pos[i]) + " of sequence " +
                              std::to_string(s) + " is not its next position " +
                              std::to_string(expect[static_cast<size_t>(s)]));
        }
        ++expect[static_cast<size_t>(s)];
    }
    if (n > n_free_) {
        throw DecodeError("decode: KV cache full: batch needs " + std::to_string(n) + " cells, " +
                          std::to_string(n_free_) + " of " + std::to_string(cells_.size()) +
                          " are free");
    }
    std::vector<uint32_t> slots;  // [n_tokens] cell index per token
    slots.reserve(n);
    for (uint32_t c = 0; c < cells_.size() && slots.size() < n; ++c) {
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
    for (size_t i = 0; i < slots.size(); ++i) {
        Cell& cell = cells_[slots[i]];
        cell.pos = batch.pos[i];
        cell.seq_id = batch.seq_id[i];
        seq_next_pos_[static_cast<size_t>(cell.seq_id)] = cell.pos + 1;
    }
    n_free_ -= static_cast<uint32_t>(slots.size());
}

void KvCells::seq_rm(int32_t seq_id) {
    if (seq_id < 0 || static_cast<uint32_t>(seq_id) >= n_seq_max_) return;
    for (Cell& c : cells_) {
        if (c.seq_id == seq_id) {
            c = Cell{};
            ++n_free_;
        }
    }
    seq_next_pos_[static_cast<size_t>(seq_id)] = 0;
}

void KvCells::clear() {
    std::fill(cells_.begin(), cells_.end(), Cell{});
    std::fill(seq_next_pos_.begin(), seq_next_pos_.end(), 0);
    n_free_ = size();
}

int32_t KvCells::next_pos(int32_t seq_id) const {
    if (seq_id < 0 || static_cast<uint32_t>(seq_id) >= n_seq_max_) {
        throw std::out_of_range("KvCells::next_pos: seq_id " + std::to_string(seq_id) +
                                " outside [0, " + std::to_string(n_seq_max_) + ")");
    }
    return seq_next_pos_[static_cast<size_t>(seq_id)];
}

uint32_t KvCells::n_kv(const std::vector<uint32_t>& slots) const {
    uint32_t end = 0;
    for (uint32_t c = 0; c < cells_.size(); ++c) {
        if (cells_[c].used()) end = c + 1;
    }
    for (uint32_t c : slots) end = std::max(end, c + 1);
    return end;
}

std::vector<float> KvCells::build_mask(const Batch& batch, const std::vector<uint32_t>& slots,
                                       uint32_t n_kv) const {
    const size_t n = batch.size();
    if (slots.size() != n || batch.pos.size() != n || batch.seq_id.size() != n) {
        throw std::invalid_argument("KvCells::build_mask: slots and batch differ in size");
    }
    if (n_kv < this->n_kv(slots) || n_kv > cells_.size()) {
        throw std::invalid_argument("KvCells::build_mask: n_kv " + std::to_string(n_kv) +
                                    " does not cover the used cells and slots (needs " +
                                    std::to_string(this->n_kv(slots)) + ")");
    }
    // The cells as they will be after commit: [n_kv] (pos, seq) per cell.
    std::vector<Cell> view(cells_.begin(), cells_.begin() + n_kv);
    for (size_t i = 0; i < n; ++i) view[slots[i]] = Cell{batch.pos[i], batch.seq_id[i]};

    std::vector<float> mask(n * n_kv, -INFINITY);  // [n_tokens, n_kv] row-major
    for (size_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n_kv; ++j) {
            const Cell& c = view[j];
            if (c.used() && c.seq_id == batch.seq_id[i] && c.pos <= batch.pos[i]) {
                mask[i * n_kv + j] = 0.0f;
            }
        }
    }
    return mask;
}

}  // namespace wb::model
