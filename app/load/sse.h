#pragma once
// Incremental reader of a server-sent-event stream (the "text/event-stream"
// format of the HTML Living Standard, section 9.2 "Server-sent events"), as
// OpenAI-compatible servers stream completions: lines "data: {json}" with a
// blank line after each event and "data: [DONE]" at the end.
//
// Bytes arrive in arbitrary pieces (a TCP read may split a line or hold
// many). The reader keeps at most `max_line_bytes` of an unfinished line and
// of one event's data, so a server that sends a 10 MB line without a newline
// yields an error instead of unbounded memory growth.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace wb::load {

/// Splits a byte stream into SSE events. Lines end with "\n", "\r\n" or a
/// lone "\r" (the spec allows all three). Fields: "data" lines are joined
/// with "\n" into the event's data; "event", "id", "retry" and comment lines
/// (starting with ':') are accepted and ignored; an empty line dispatches
/// the event (when it has data).
class SseReader {
  public:
    /// Receives one event's data (without the "data:" prefix); returns false
    /// to stop reading.
    using OnEvent = std::function<bool(std::string_view data)>;

    /// `max_line_bytes` (> 0) bounds one line and one event's data.
    explicit SseReader(size_t max_line_bytes);

    /// Feeds the next piece of the stream. Returns "" when fine, else an
    /// error sentence ("an SSE line longer than 1048576 bytes", or the
    /// callback asked to stop: "stopped"). After an error the reader stays
    /// failed and ignores further input.
    std::string feed(std::string_view bytes, const OnEvent& on_event);

    /// Bytes of the line not yet ended and the data of the event not yet
    /// dispatched (the spec drops an unfinished event at the end of the
    /// stream; callers use this to tell a truncated stream).
    bool has_pending() const { return !line_.empty() || !data_.empty(); }

  private:
    std::string line(std::string_view l, const OnEvent& on_event);
    size_t max_;
    std::string line_;
    std::string data_;
    bool have_data_ = false;
    bool after_cr_ = false;
    std::string error_;
};

}  // namespace wb::load
