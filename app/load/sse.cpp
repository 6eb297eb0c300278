#include "load/sse.h"

#include <stdexcept>

namespace wb::load {

SseReader::SseReader(size_t max_line_bytes) : max_(max_line_bytes) {
    if (max_line_bytes == 0) throw std::invalid_argument("SseReader: max_line_bytes must be > 0");
}

std::string SseReader::line(std::string_view l, const OnEvent& on_event) {
    if (l.empty()) {
        if (!have_data_) return "";
        std::string data = std::move(data_);
        data_.clear();
        have_data_ = false;
        return on_event(data) ? "" : "stopped";
    }
    if (l.front() == ':') return "";  // a comment (keep-alive)
    const size_t colon = l.find(':');
    const std::string_view field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field != "data") return "";  // event, id, retry and unknown fields: ignored
    if (data_.size() + value.size() + 1 > max_) {
        return "an SSE event with more than " + std::to_string(max_) + " bytes of data";
    }
    if (have_data_) data_ += '\n';
    data_ += value;
    have_data_ = true;
    return "";
}

std::string SseReader::feed(std::string_view bytes, const OnEvent& on_event) {
    if (!error_.empty()) return error_;
    for (const char c : bytes) {
        if (c == '\n' && after_cr_) {  // the "\n" of a "\r\n"
            after_cr_ = false;
            continue;
        }
        after_cr_ = c == '\r';
        if (c == '\n' || c == '\r') {
            error_ = line(line_, on_event);
            line_.clear();
            if (!error_.empty()) return error_;
            continue;
        }
        if (line_.size() >= max_) {
            error_ = "an SSE line longer than " + std::to_string(max_) + " bytes";
            line_.clear();
            return error_;
        }
        line_ += c;
    }
    return "";
}

}  // namespace wb::load
