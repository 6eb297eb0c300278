#include "model/profile.h"

#include <algorithm>
#include <cstdio>

namespace wb::model {

void Profile::add(const std::string& op, double ms) {
    Acc& a = ops_[op];
    a.calls += 1;
    a.ms += ms;
}

std::vector<ProfileRow> Profile::rows() const {
    double total = 0.0;
    for (const auto& [op, a] : ops_) total += a.ms;
    std::vector<ProfileRow> out;
    for (const auto& [op, a] : ops_)
        out.push_back({op, a.calls, a.ms, total > 0.0 ? a.ms / total : 0.0});
    std::sort(out.begin(), out.end(),
              [](const ProfileRow& x, const ProfileRow& y) { return x.total_ms > y.total_ms; });
    return out;
}

std::string Profile::table() const {
    std::string s;
    char line[160];
    std::snprintf(line, sizeof line, "%-28s %8s %12s %7s\n", "op", "calls", "GPU ms", "share");
    s += line;
    double total = 0.0;
    uint64_t calls = 0;
    for (const ProfileRow& r : rows()) {
        std::snprintf(line, sizeof line, "%-28s %8llu %12.3f %6.1f%%\n", r.op.c_str(),
                      static_cast<unsigned long long>(r.calls), r.total_ms, r.share * 100.0);
        s += line;
        total += r.total_ms;
        calls += r.calls;
    }
    std::snprintf(line, sizeof line, "%-28s %8llu %12.3f %6.1f%%\n", "total",
                  static_cast<unsigned long long>(calls), total, 100.0);
    s += line;
    return s;
}

}  // namespace wb::model
