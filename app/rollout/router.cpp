#include "rollout/router.h"

#include <stdexcept>
#include <string>

namespace wb::rollout {

const char* to_string(Arm a) {
    return a == Arm::Canary ? "canary" : "stable";
}

Router::Router(uint64_t salt) : salt_(salt), next_(key_position("", salt)) {}

void Router::set_share(double share) {
    if (!(share >= 0.0 && share <= 1.0))
        throw std::invalid_argument("canary share " + std::to_string(share) +
                                    " is outside 0..1 (0% to 100%)");
    const std::lock_guard lock(mu_);
    share_ = share;
}

double Router::share() const {
    const std::lock_guard lock(mu_);
    return share_;
}

double Router::key_position(std::string_view key, uint64_t salt) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a offset basis
    for (int i = 0; i < 8; ++i) {        // the salt first, byte by byte
        h ^= (salt >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;  // FNV prime
    }
    for (const char c : key) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    // splitmix64's finalizer spreads every input bit over the output.
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

Arm Router::route(std::string_view key) {
    constexpr double kInvPhi = 0.6180339887498949;  // 1 / golden ratio
    const std::lock_guard lock(mu_);
    auto next = [this] {
        const double u = next_;
        next_ += kInvPhi;
        if (next_ >= 1.0) next_ -= 1.0;
        return u;
    };
    double u = 0;
    if (key.empty()) {
        u = next();
    } else if (const auto it = keys_.find(std::string(key)); it != keys_.end()) {
        u = it->second;
    } else if (keys_.size() < kMaxKeys) {
        u = next();
        keys_.emplace(std::string(key), u);
    } else {
        u = key_position(key, salt_);
    }
    return u < share_ ? Arm::Canary : Arm::Stable;
}

}  // namespace wb::rollout
