#pragma once
// The blocks of the KV pool and the prefix cache over them (vLLM's
// BlockPool with automatic prefix caching: Kwon et al., "Efficient Memory
// Management for Large Language Model Serving with PagedAttention", SOSP
// 2023, and vLLM's docs/design/prefix_caching.md). Knows nothing about
// sequences: KvCells (kv_cells.h) keeps each sequence's list of blocks and
// calls this class to take, share and give back blocks.
//
// A block is block_size consecutive cache cells (cells b * block_size ..
// (b + 1) * block_size - 1 of every layer's K and V buffers) plus the
// token ids written into them. Each block is in exactly one state:
//   - free: held by no sequence, content meaningless (the `free` set);
//   - held: ref > 0 sequences list it in their block tables;
//   - cached: held by no sequence, but its content is in the prefix cache
//     and may be reused until it is evicted (the LRU list).
// A held block may also be in the prefix cache (a full block of a running
// sequence that others share by reference). Only full blocks are ever held
// by more than one sequence, so no sequence writes into a shared block.
//
// Prefix cache keys: a full block's hash covers its tokens AND everything
// before it (hash chain: h_i = H(h_{i-1}, tokens of block i), h_{-1} =
// kRootHash), because its K/V depend on the whole prefix (attention) and on
// the positions (RoPE). Lookups also compare the block's stored token ids
// and parent hash, so a wrong reuse needs a 64-bit collision of the parent
// hash and identical tokens. The last, partly filled block of a sequence
// that ended is cached too (indexed by its parent hash): a new sequence
// that continues it (same prefix, then all of the tail's tokens) takes it
// over (it is held by no one, so nothing is copied) and writes on after
// them. That is what makes a chat's next turn prefill only its new tokens.
// A tail that only partly matches is left in the cache: taking it over
// would destroy content for a gain of less than a block.
//
// Eviction: blocks become evictable in the order they were given back
// (least recently used first); a sequence gives its blocks back last block
// first, so the tail of a conversation is evicted before its shared head.
// Allocation takes free blocks (lowest id first) before evicting.

#include <cstdint>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

namespace wb::model {

class KvBlockPool {
  public:
    /// Parent hash of a sequence's first block.
    static constexpr uint64_t kRootHash = 0x6b76706f6f6c0001ull;

    /// Hash of a block holding `tokens` after the prefix whose last full
    /// block hashed to `parent` (kRootHash for the first block). 64-bit,
    /// splitmix64 mixing per token (Steele, Lea, Flood, "Fast splittable
    /// pseudorandom number generators", OOPSLA 2014). Pure function.
    static uint64_t hash_block(uint64_t parent, std::span<const int32_t> tokens);

    /// `n_blocks` blocks of `block_size` cells. Throws std::invalid_argument
    /// when either is 0.
    KvBlockPool(uint32_t n_blocks, uint32_t block_size);

    uint32_t n_blocks() const { return static_cast<uint32_t>(blocks_.size()); }
    uint32_t block_size() const { return block_size_; }
    /// Blocks held by no sequence: free plus cached (evictable).
    uint32_t n_available() const { return static_cast<uint32_t>(free_.size()) + n_lru_; }
    /// Blocks held by no sequence whose content is in the prefix cache.
    uint32_t n_cached_free() const { return n_lru_; }
    /// Sequences holding block `b` (0 = free or cached).
    uint32_t ref(uint32_t b) const { return blocks_.at(b).ref; }
    /// Token ids written into block `b` (its first fill() cells).
    std::span<const int32_t> tokens(uint32_t b) const;
    /// Whether block `b`'s content is in the prefix cache.
    bool in_cache(uint32_t b) const { return blocks_.at(b).cached; }

    /// The blocks take(n) would hand out, in order, without changing
    /// anything: free blocks (lowest id first), then cached ones in LRU
    /// order. Fewer than n when fewer are available.
    std::vector<uint32_t> peek(uint32_t n) const;
    /// Makes free or cached block `b` held by one sequence, empty (fill 0),
    /// out of the prefix cache (evicting it when it was cached). Throws
    /// std::logic_error when `b` is held.
    void take(uint32_t b);
    /// Takes over cached, unheld tail block `b` with its tokens: it leaves
    /// the prefix cache (its holder will write on into it) and becomes held
    /// by one sequence. Throws std::logic_error when `b` is held, not
    /// cached or full.
    void take_cached(uint32_t b);
    /// One more sequence holds cached full block `b` (shared by reference).
    /// Throws std::logic_error when `b` is not a cached full block.
    void share(uint32_t b);
    /// One sequence fewer holds `b`. At 0 it becomes cached (LRU, most
    /// recent) when its content is in the prefix cache, else free. Throws
    /// std::logic_error when `b` is not held.
    void release(uint32_t b);

    /// Writes token `token` into the next cell of held block `b`. Throws
    /// std::logic_error when `b` is full, shared or not held.
    void append(uint32_t b, int32_t token);
    /// Cells of `b` holding tokens.
    uint32_t fill(uint32_t b) const { return blocks_.at(b).fill; }
    /// Blocks in the free set (held by no one, content meaningless): what
    /// take() can hand out without evicting cached content.
    uint32_t n_free() const { return static_cast<uint32_t>(free_.size()); }

    /// Cuts held block `b` (its only holder) back to its first `fill`
    /// tokens, as if the later ones had never been appended: when any are
    /// removed it leaves the prefix cache (a full block published by
    /// publish_full no longer has that content). fill 0 and a release()
    /// after it put the block in the free set. Throws std::logic_error when
    /// `b` is not held by exactly one sequence or `fill` exceeds its fill.
    void truncate(uint32_t b, uint32_t fill);

    /// Puts held block `b` (full, filled by its only holder) in the prefix
    /// cache under hash_block(parent, tokens). Returns false and leaves it
    /// out when another block already caches that content (two sequences
    /// computed the same prefix at once). Throws std::logic_error when `b`
    /// is not full.
    bool publish_full(uint32_t b, uint64_t parent);
    /// Puts held, partly filled block `b` in the prefix cache under its
    /// parent hash, for a later take-over (call before the last release).
    void publish_partial(uint32_t b, uint64_t parent);

    /// The cached full block continuing prefix `parent` with exactly
    /// `tokens` (block_size of them), or -1.
    int64_t find_full(uint64_t parent, std::span<const int32_t> tokens) const;
    /// The longest unheld cached tail (a partly filled block) after prefix
    /// `parent` all of whose tokens begin `tokens`, and its fill; {-1, 0}
    /// when none.
    std::pair<int64_t, uint32_t> find_take_over(uint64_t parent,
                                                std::span<const int32_t> tokens) const;

    /// Frees every block and empties the prefix cache.
    void clear();

  private:
    struct Block {
        uint32_t ref = 0;
        uint32_t fill = 0;
        bool cached = false;           // in the prefix cache (children_, and full_ when full)
        uint64_t hash = 0;             // when cached and full: hash_block(parent, tokens)
        uint64_t parent = 0;           // when cached: hash of the prefix before it
        int64_t prev = -1, next = -1;  // LRU links while cached and unheld
    };
    void lru_push(uint32_t b);
    void lru_unlink(uint32_t b);
    void uncache(uint32_t b);  // out of the prefix cache indexes

    uint32_t block_size_;
    std::vector<Block> blocks_;
    std::vector<int32_t> tokens_;  // [n_blocks, block_size]
    std::set<uint32_t> free_;
    int64_t lru_head_ = -1, lru_tail_ = -1;  // head: least recently given back
    uint32_t n_lru_ = 0;
    std::unordered_map<uint64_t, uint32_t> full_;           // hash -> cached full block
    std::unordered_multimap<uint64_t, uint32_t> children_;  // parent hash -> cached blocks
};

}  // namespace wb::model
