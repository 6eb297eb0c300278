#include "kv/kv_block_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wb::model {

namespace {

uint64_t mix64(uint64_t x) {
    // splitmix64's finalizer: every input bit affects every output bit.
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

[[noreturn]] void misuse(const char* what, uint32_t b) {
    throw std::logic_error(std::string("KvBlockPool: ") + what + " (block " + std::to_string(b) +
                           ")");
}

}  // namespace

uint64_t KvBlockPool::hash_block(uint64_t parent, std::span<const int32_t> tokens) {
    uint64_t h = mix64(parent + 0x9e3779b97f4a7c15ull);
    for (int32_t t : tokens) h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(t)) + 1));
    return mix64(h ^ (tokens.size() << 32));
}

KvBlockPool::KvBlockPool(uint32_t n_blocks, uint32_t block_size)
    : block_size_(block_size), blocks_(n_blocks), tokens_(size_t{n_blocks} * block_size, -1) {
    if (n_blocks == 0 || block_size == 0) {
        throw std::invalid_argument("KvBlockPool: n_blocks and block_size must be positive");
    }
    for (uint32_t b = 0; b < n_blocks; ++b) free_.insert(free_.end(), b);
}

std::span<const int32_t> KvBlockPool::tokens(uint32_t b) const {
    return {tokens_.data() + size_t{b} * block_size_, blocks_.at(b).fill};
}

std::vector<uint32_t> KvBlockPool::peek(uint32_t n) const {
    std::vector<uint32_t> out;
    out.reserve(std::min<size_t>(n, n_available()));
    for (auto it = free_.begin(); it != free_.end() && out.size() < n; ++it) out.push_back(*it);
    for (int64_t b = lru_head_; b >= 0 && out.size() < n; b = blocks_[static_cast<size_t>(b)].next)
        out.push_back(static_cast<uint32_t>(b));
    return out;
}

void KvBlockPool::lru_push(uint32_t b) {
    Block& k = blocks_[b];
    k.prev = lru_tail_;
    k.next = -1;
    if (lru_tail_ >= 0) blocks_[static_cast<size_t>(lru_tail_)].next = b;
    lru_tail_ = b;
    if (lru_head_ < 0) lru_head_ = b;
    ++n_lru_;
}

void KvBlockPool::lru_unlink(uint32_t b) {
    Block& k = blocks_[b];
    if (k.prev >= 0) {
        blocks_[static_cast<size_t>(k.prev)].next = k.next;
    } else {
        lru_head_ = k.next;
    }
    if (k.next >= 0) {
        blocks_[static_cast<size_t>(k.next)].prev = k.prev;
    } else {
        lru_tail_ = k.prev;
    }
    k.prev = k.next = -1;
    --n_lru_;
}

void KvBlockPool::uncache(uint32_t b) {
    Block& k = blocks_[b];
    if (!k.cached) return;
    if (k.fill == block_size_) {
        auto it = full_.find(k.hash);
        if (it != full_.end() && it->second == b) full_.erase(it);
    }
    auto [lo, hi] = children_.equal_range(k.parent);
    for (auto it = lo; it != hi; ++it) {
        if (it->second == b) {
            children_.erase(it);
            break;
        }
    }
    k.cached = false;
}

void KvBlockPool::take(uint32_t b) {
    Block& k = blocks_.at(b);
    if (k.ref > 0) misuse("take of a held block", b);
    if (k.cached) {
        lru_unlink(b);
        uncache(b);
    } else {
        free_.erase(b);
    }
    k.ref = 1;
    k.fill = 0;
}

void KvBlockPool::take_cached(uint32_t b) {
    Block& k = blocks_.at(b);
    if (k.ref > 0 || !k.cached || k.fill >= block_size_) {
        misuse("take-over of a block that is held, not cached or full", b);
    }
    lru_unlink(b);
    uncache(b);
    k.ref = 1;
}

void KvBlockPool::share(uint32_t b) {
    Block& k = blocks_.at(b);
    if (!k.cached || k.fill != block_size_)
        misuse("share of a block that is not cached and full", b);
    if (k.ref == 0) lru_unlink(b);
    ++k.ref;
}

void KvBlockPool::release(uint32_t b) {
    Block& k = blocks_.at(b);
    if (k.ref == 0) misuse("release of a block no sequence holds", b);
    if (--k.ref > 0) return;
    if (k.cached) {
        lru_push(b);
    } else {
        k.fill = 0;
        free_.insert(b);
    }
}

void KvBlockPool::append(uint32_t b, int32_t token) {
    Block& k = blocks_.at(b);
    if (k.ref != 1 || k.fill >= block_size_) misuse("append to a full, shared or free block", b);
    tokens_[size_t{b} * block_size_ + k.fill] = token;
    ++k.fill;
}

void KvBlockPool::truncate(uint32_t b, uint32_t fill) {
    Block& k = blocks_.at(b);
    if (k.ref != 1 || fill > k.fill)
        misuse("truncate of a block not held alone, or past its fill", b);
    if (fill == k.fill) return;
    uncache(b);  // its content changes: whatever was published under it is gone
    std::fill(tokens_.begin() + static_cast<std::ptrdiff_t>(size_t{b} * block_size_ + fill),
              tokens_.begin() + static_cast<std::ptrdiff_t>(size_t{b} * block_size_ + k.fill), -1);
    k.fill = fill;
}

bool KvBlockPool::publish_full(uint32_t b, uint64_t parent) {
    Block& k = blocks_.at(b);
    if (k.fill != block_size_) misuse("publish_full of a block that is not full", b);
    if (k.cached) return true;
    const uint64_t h = hash_block(parent, tokens(b));
    if (full_.contains(h)) return false;
    k.cached = true;
    k.hash = h;
    k.parent = parent;
    full_.emplace(h, b);
    children_.emplace(parent, b);
    return true;
}

void KvBlockPool::publish_partial(uint32_t b, uint64_t parent) {
    Block& k = blocks_.at(b);
    if (k.ref == 0 || k.fill == 0 || k.fill >= block_size_) {
        misuse("publish_partial of a block that is free, empty or full", b);
    }
    if (k.cached) return;
    k.cached = true;
    k.parent = parent;
    children_.emplace(parent, b);
}

int64_t KvBlockPool::find_full(uint64_t parent, std::span<const int32_t> tokens) const {
    if (tokens.size() != block_size_) return -1;
    auto it = full_.find(hash_block(parent, tokens));
    if (it == full_.end()) return -1;
    const Block& k = blocks_[it->second];
    // The hash chain says "same prefix"; the stored ids and parent confirm it.
    const std::span<const int32_t> have = this->tokens(it->second);
    if (k.parent != parent || !std::equal(have.begin(), have.end(), tokens.begin())) return -1;
    return it->second;
}

std::pair<int64_t, uint32_t> KvBlockPool::find_take_over(uint64_t parent,
                                                         std::span<const int32_t> tokens) const {
    std::pair<int64_t, uint32_t> best{-1, 0};
    auto [lo, hi] = children_.equal_range(parent);
    for (auto it = lo; it != hi; ++it) {
        const uint32_t b = it->second;
        const std::span<const int32_t> have = this->tokens(b);
        if (blocks_[b].ref > 0 || have.size() >= block_size_ || have.size() > tokens.size() ||
            !std::equal(have.begin(), have.end(), tokens.begin())) {
            continue;
        }
        const auto m = static_cast<uint32_t>(have.size());
        // Ties go to the lower id, so the choice does not depend on hash order.
        if (m > best.second || (m == best.second && static_cast<int64_t>(b) < best.first)) {
            best = {b, m};
        }
    }
    return best;
}

void KvBlockPool::clear() {
    for (Block& k : blocks_) k = Block{};
    free_.clear();
    for (uint32_t b = 0; b < n_blocks(); ++b) free_.insert(free_.end(), b);
    lru_head_ = lru_tail_ = -1;
    n_lru_ = 0;
    full_.clear();
    children_.clear();
}

}  // namespace wb::model
