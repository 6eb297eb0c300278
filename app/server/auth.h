#pragma once
// Who may talk to the server: the bind-address rule (loopback only without
// an API key) and the bearer-token check (RFC 6750's Authorization: Bearer
// header), compared in constant time so the answer's timing does not tell
// how much of a guessed key was right.
// Qt-free.

#include <string>
#include <string_view>

namespace wb::server {

/// True for the loopback addresses 127.0.0.1 (any 127.x.y.z), ::1 and
/// "localhost": only this machine can connect.
bool is_loopback_host(std::string_view host);

/// a == b in time that depends only on the lengths, not on where they
/// differ. Never throws.
bool constant_time_equal(std::string_view a, std::string_view b);

/// True when `authorization` (the Authorization header's value) is
/// "Bearer <key>" with exactly `key` (scheme case-insensitive, as RFC 7235
/// says). An empty `key` accepts everything (no key configured).
bool bearer_matches(std::string_view authorization, std::string_view key);

}  // namespace wb::server
