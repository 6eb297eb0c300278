#include "server/auth.h"

#include <cctype>

namespace wb::server {

bool is_loopback_host(std::string_view host) {
    if (host == "localhost" || host == "::1" || host == "[::1]") return true;
    // 127.0.0.0/8, written as a dotted quad.
    if (host.substr(0, 4) != "127.") return false;
    int dots = 0;
    for (char c : host) {
        if (c == '.') {
            ++dots;
        } else if (!std::isdigit(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return dots == 3;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
    // Every byte of `a` is looked at whatever the contents; a length
    // mismatch is folded in rather than returned early.
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < a.size(); ++i) {
        const unsigned char bc = b.empty() ? 0 : static_cast<unsigned char>(b[i % b.size()]);
        diff |= static_cast<unsigned char>(static_cast<unsigned char>(a[i]) ^ bc);
    }
    return diff == 0;
}

bool bearer_matches(std::string_view authorization, std::string_view key) {
    if (key.empty()) return true;
    constexpr std::string_view scheme = "bearer ";
    if (authorization.size() < scheme.size()) return false;
    for (size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return false;
    std::string_view token = authorization.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    return constant_time_equal(token, key);
}

}  // namespace wb::server
