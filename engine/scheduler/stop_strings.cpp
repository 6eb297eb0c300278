#include "scheduler/stop_strings.h"

#include <algorithm>

namespace wb::scheduler {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
    for (std::string& s : stops) {
        if (s.empty()) continue;
        max_stop_ = std::max(max_stop_, s.size());
        stops_.push_back(std::move(s));
    }
}

std::string StopStringMatcher::push(std::string_view piece) {
    if (stopped_) return {};
    const size_t old_size = text_.size();
    text_.append(piece);

    // A new match must end inside the new piece, so it starts no earlier than
    // old_size - (max_stop - 1).
    const size_t from = old_size >= max_stop_ ? old_size - max_stop_ + 1 : 0;
    size_t cut = std::string::npos;
    for (const std::string& s : stops_) {
        const size_t at = text_.find(s, from);
        if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
        stopped_ = true;
        text_.resize(cut);
        std::string out = cut > streamed_ ? text_.substr(streamed_) : std::string();
        streamed_ = text_.size();
        return out;
    }

    // Hold back the longest tail of the text that is a proper prefix of a
    // stop string (it may complete with the next piece).
    size_t hold = 0;
    const size_t unsent = text_.size() - streamed_;
    for (const std::string& s : stops_) {
        for (size_t len = std::min(s.size() - 1, unsent); len > hold; --len) {
            if (std::string_view(text_).substr(text_.size() - len) ==
                std::string_view(s).substr(0, len)) {
                hold = len;
                break;
            }
        }
    }
    const size_t send_to = text_.size() - hold;
    std::string out = text_.substr(streamed_, send_to - streamed_);
    streamed_ = send_to;
    return out;
}

std::string StopStringMatcher::flush() {
    std::string out = text_.substr(streamed_);
    streamed_ = text_.size();
    return out;
}

}  // namespace wb::scheduler
