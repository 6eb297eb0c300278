#pragma once
// Everything observable about a KV pool (model::KvCells and its
// KvBlockPool), to compare two pools: each sequence's block table, length
// and prefix hash; each block's ref count, fill, token ids and prefix-cache
// state; the order blocks would be handed out (free by id, then cached in
// LRU order). Used to show that speculative decoding's rollback leaves the
// pool as plain decoding would.
//
// With several sequences the block ids and the LRU order depend on the
// steps at which each sequence crossed a block end and ended (two plain
// runs with other step sizes differ there too), so `content` compares a
// pool without them, and `unexplained_cached_blocks` checks the prefix
// cache against the token lists the requests really had.

#include <algorithm>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "kv/kv_cells.h"

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

/// A pool's content without block ids and LRU order: per sequence its
/// tokens (from its blocks, in table order), length and prefix hash; the
/// blocks as a sorted list of (ref, fill, tokens, cached); how many blocks
/// are free and how many only cached.
struct Content {
    using Block = std::tuple<uint32_t, uint32_t, std::vector<int32_t>, bool>;
    std::vector<std::vector<int32_t>> seq_tokens;
    std::vector<int32_t> next;
    std::vector<uint64_t> prefix_hash;
    std::vector<Block> blocks;  // sorted
    uint32_t n_free = 0, n_cached_free = 0;
    bool operator==(const Content&) const = default;
};

inline Content content(const wb::model::KvCells& c) {
    Content k;
    const wb::model::KvBlockPool& p = c.pool();
    for (uint32_t q = 0; q < c.n_seq_max(); ++q) {
        std::vector<int32_t> toks;
        for (uint32_t b : c.seq_blocks(int32_t(q))) {
            const auto t = p.tokens(b);
            toks.insert(toks.end(), t.begin(), t.end());
        }
        k.seq_tokens.push_back(std::move(toks));
        k.next.push_back(c.next_pos(int32_t(q)));
        k.prefix_hash.push_back(c.seq_prefix_hash(int32_t(q)));
    }
    for (uint32_t b = 0; b < p.n_blocks(); ++b) {
        const auto t = p.tokens(b);
        k.blocks.emplace_back(p.ref(b), p.fill(b), std::vector<int32_t>(t.begin(), t.end()),
                              p.in_cache(b));
    }
    std::sort(k.blocks.begin(), k.blocks.end());
    k.n_free = p.n_free();
    k.n_cached_free = p.n_cached_free();
    return k;
}

/// Blocks of the prefix cache that none of `sequences` (each a token list
/// from position 0 that a sequence's K/V held at some point, e.g. a
/// request's prompt + output but the last token) accounts for: not a full
/// block on one's hash chain (find_full), nor a partly filled tail whose
/// tokens continue one's chain (find_take_over; a preempted request leaves
/// such a shorter tail). A rejected draft token left in a cached block shows
/// up here, whatever the timing. Empty when the cache holds only what the
/// sequences really had.
inline std::vector<uint32_t> unexplained_cached_blocks(
    const wb::model::KvCells& c, const std::vector<std::vector<int32_t>>& sequences) {
    using wb::model::KvBlockPool;
    const KvBlockPool& p = c.pool();
    const uint32_t bs = p.block_size();
    std::vector<bool> explained(p.n_blocks(), false);
    for (const auto& seq : sequences) {
        uint64_t h = KvBlockPool::kRootHash;
        for (size_t at = 0; at < seq.size(); at += bs) {
            for (uint32_t b = 0; b < p.n_blocks(); ++b) {
                const auto t = p.tokens(b);
                if (explained[b] || !p.in_cache(b) || t.size() >= bs ||
                    t.size() > seq.size() - at ||
                    !std::equal(t.begin(), t.end(), seq.begin() + long(at))) {
                    continue;
                }
                if (p.find_take_over(h, t).first == int64_t(b)) explained[b] = true;
            }
            if (at + bs > seq.size()) break;
            const std::span<const int32_t> blk(seq.data() + at, bs);
            const int64_t b = p.find_full(h, blk);
            if (b >= 0) explained[size_t(b)] = true;
            h = KvBlockPool::hash_block(h, blk);
        }
    }
    std::vector<uint32_t> out;
    for (uint32_t b = 0; b < p.n_blocks(); ++b) {
        if (p.in_cache(b) && !explained[b]) out.push_back(b);
    }
    return out;
}

}  // namespace wbtest
