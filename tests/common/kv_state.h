#pragma once
// Everything observable about a KV pool (model::KvCells and its
// KvBlockPool), to compare two pools: each sequence's block table, length
// and prefix hash; each block's ref count, fill, token ids and prefix-cache
// state; the order blocks would be handed out (free by id, then cached in
// LRU order). Used to show that speculative decoding's rollback leaves the
// pool as plain decoding would.

#include <cstdint>
#include <vector>

#include "model/kv_cells.h"

namespace wbtest {

/// Everything observable about a KvCells and its pool.
struct State {
    std::vector<std::vector<uint32_t>> blocks;
    std::vector<int32_t> next;
    std::vector<uint64_t> prefix_hash;
    std::vector<uint32_t> ref, fill;
    std::vector<std::vector<int32_t>> tokens;
    std::vector<bool> cached;
    std::vector<uint32_t> hand_out;  // free blocks by id, then cached ones in LRU order
    bool operator==(const State&) const = default;
};

inline State state(const wb::model::KvCells& c) {
    State s;
    for (uint32_t q = 0; q < c.n_seq_max(); ++q) {
        s.blocks.push_back(c.seq_blocks(int32_t(q)));
        s.next.push_back(c.next_pos(int32_t(q)));
        s.prefix_hash.push_back(c.seq_prefix_hash(int32_t(q)));
    }
    const wb::model::KvBlockPool& p = c.pool();
    for (uint32_t b = 0; b < p.n_blocks(); ++b) {
        s.ref.push_back(p.ref(b));
        s.fill.push_back(p.fill(b));
        const auto t = p.tokens(b);
        s.tokens.emplace_back(t.begin(), t.end());
        s.cached.push_back(p.in_cache(b));
    }
    s.hand_out = p.peek(p.n_available());
    return s;
}

}  // namespace wbtest
