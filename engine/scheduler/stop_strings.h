#pragma once
// Stop strings on streamed text, the way llama.cpp's server handles them:
// generation stops when the output contains a stop string; the stop string
// and anything after it are not part of the output; and text that could be
// the start of a stop string is held back from the stream until the next
// tokens show whether it is one (so a client never sees half a stop string).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wb::scheduler {

/// Tracks one request's output text against its stop strings.
class StopStringMatcher {
  public:
    /// Empty stop strings are ignored.
    explicit StopStringMatcher(std::vector<std::string> stops);

    /// Appends `piece` (complete UTF-8 from the detokenizer) to the output and
    /// returns the text that may now be streamed. Sets stopped() once a stop
    /// string occurs; the output then ends right before it (the earliest
    /// occurrence of any stop string wins).
    std::string push(std::string_view piece);
    /// At the end of the request: the held-back text (nothing if stopped()).
    std::string flush();

    bool stopped() const { return stopped_; }
    /// The output so far: streamed text plus what is held back (cut at the
    /// stop string once stopped()).
    const std::string& text() const { return text_; }

  private:
    std::vector<std::string> stops_;
    size_t max_stop_ = 0;  // longest stop string, bytes
    std::string text_;     // whole output
    size_t streamed_ = 0;  // bytes of text_ already returned by push()/flush()
    bool stopped_ = false;
};

}  // namespace wb::scheduler
