#include "runlog/time_utc.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace wb::runlog {

namespace chr = std::chrono;

int64_t now_utc_ms() {
    return chr::duration_cast<chr::milliseconds>(chr::system_clock::now().time_since_epoch())
        .count();
}

std::string format_utc_ms(int64_t ms) {
    const chr::sys_time<chr::milliseconds> t{chr::milliseconds{ms}};
    const chr::sys_days day = chr::floor<chr::days>(t);
    const chr::year_month_day ymd{day};
    const chr::hh_mm_ss<chr::milliseconds> hms{t - day};
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", int(ymd.year()),
                  unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                  int(hms.minutes().count()), int(hms.seconds().count()),
                  int(hms.subseconds().count()));
    return buf;
}

namespace {

[[noreturn]] void bad(std::string_view text, const char* why) {
    throw std::invalid_argument("bad time \"" + std::string(text) + "\": " + why +
                                " (expected e.g. 2026-11-29 or 2026-11-29T23:05:01Z)");
}

// Reads exactly `n` digits at `pos`.
int digits(std::string_view text, size_t& pos, int n) {
    int v = 0;
    for (int i = 0; i < n; ++i, ++pos) {
        if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') bad(text, "digit expected");
        v = v * 10 + (text[pos] - '0');
    }
    return v;
}

void expect(std::string_view text, size_t& pos, char c) {
    if (pos >= text.size() || text[pos] != c) bad(text, "unexpected character");
    ++pos;
}

}  // namespace

int64_t parse_utc_ms(std::string_view text) {
    size_t p = 0;
    const int y = digits(text, p, 4);
    expect(text, p, '-');
    const int mo = digits(text, p, 2);
    expect(text, p, '-');
    const int d = digits(text, p, 2);
    const chr::year_month_day ymd{chr::year{y}, chr::month{unsigned(mo)}, chr::day{unsigned(d)}};
    if (!ymd.ok()) bad(text, "no such date");
    int64_t ms = chr::sys_days{ymd}.time_since_epoch().count() * int64_t{86400000};
    if (p == text.size()) return ms;
    if (text[p] != 'T' && text[p] != 't' && text[p] != ' ') bad(text, "'T' expected after date");
    ++p;
    const int h = digits(text, p, 2);
    expect(text, p, ':');
    const int mi = digits(text, p, 2);
    int s = 0, frac_ms = 0;
    if (p < text.size() && text[p] == ':') {
        ++p;
        s = digits(text, p, 2);
        if (p < text.size() && text[p] == '.') {
            ++p;
            int n = 0;
            while (p < text.size() && text[p] >= '0' && text[p] <= '9') {
                if (n < 3) frac_ms = frac_ms * 10 + (text[p] - '0');
                ++n, ++p;
            }
            if (n == 0) bad(text, "digits expected after '.'");
            for (; n < 3; ++n) frac_ms *= 10;
        }
    }
    if (h > 23 || mi > 59 || s > 60) bad(text, "time of day out of range");
    ms += (int64_t{h} * 3600 + mi * 60 + s) * 1000 + frac_ms;
    if (p == text.size()) return ms;
    if (text[p] == 'Z' || text[p] == 'z') {
        ++p;
    } else if (text[p] == '+' || text[p] == '-') {
        const int sign = text[p] == '+' ? 1 : -1;
        ++p;
        const int oh = digits(text, p, 2);
        if (p < text.size() && text[p] == ':') ++p;
        const int om = digits(text, p, 2);
        if (oh > 23 || om > 59) bad(text, "offset out of range");
        ms -= sign * (int64_t{oh} * 60 + om) * 60000;  // local = UTC + offset
    } else {
        bad(text, "'Z' or an offset expected");
    }
    if (p != text.size()) bad(text, "trailing characters");
    return ms;
}

std::string compact_utc_now() {
    const std::string t = format_utc_ms(now_utc_ms());  // 2026-11-29T23:05:01.042Z
    std::string out;
    for (char c : t.substr(0, 19))
        if (c != '-' && c != ':') out += c;
    return out + "Z";
}

}  // namespace wb::runlog
