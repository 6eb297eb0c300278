#pragma once
// Reads one OpenAI-compatible answer into a RequestResult: the events of a
// streamed answer (each event's data, as SseReader splits them) or one JSON
// body (a server that ignores "stream"), plus the error body of a non-200
// answer. Pure: no network; the HTTP client (client.cpp) feeds it, and the
// fuzzer (tests/fuzz/fuzz_answer.cpp) feeds it hostile bytes.
//
// Formats: OpenAI's chat.completion.chunk / text_completion objects
// (choices[0].delta.content, choices[0].message.content or choices[0].text;
// finish_reason; usage.prompt_tokens / completion_tokens; id; model; our
// server's timings.queue_ms / ttft_ms extension) and its
// error object {"error": {"message": ...}}. A server's text is quoted in
// messages shortened and on one line; nothing a server sends is walked
// recursively, so a deeply nested value cannot exhaust the stack.

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "load/client.h"

namespace wb::load {

/// Collects one answer. Timing: TTFT is the first content chunk's arrival
/// minus t0, ITL the gaps between content chunks (ms, `now_ms`' clock).
class AnswerReader {
  public:
    /// `count` (may be empty) counts output tokens when the server sends no
    /// usage block; `now_ms` is the clock (steady_now_ms by default).
    explicit AnswerReader(TokenCounter count, std::function<double()> now_ms = steady_now_ms);

    /// Starts the clock: TTFT is measured from `t0_ms`.
    void start(double t0_ms) { t0_ = t0_ms; }
    double t0() const { return t0_; }

    /// One SSE event's data. Returns false (and sets failure()) when the
    /// event is not a JSON object or carries an error; "[DONE]" ends the
    /// stream (done() turns true).
    bool on_event(std::string_view data);

    /// A non-streamed answer's whole body. Returns "" when it is a
    /// completion, else the reason ("the JSON answer has no choices", ...).
    std::string read_body(std::string_view body);

    /// Sets output_tokens and its source ("usage", "tokenizer" or "chunks")
    /// and TPOT; call once the answer is complete.
    void finish_counts();

    /// Called with each content chunk's text as it is read (streamed or a
    /// whole body's text once); may be empty.
    void set_on_content(std::function<void(const std::string&)> f) { on_content_ = std::move(f); }

    RequestResult& result() { return r_; }
    /// Why reading stopped ("" while fine).
    const std::string& failure() const { return failure_; }
    void set_failure(std::string why) { failure_ = std::move(why); }
    int events() const { return events_; }
    bool done() const { return done_; }

  private:
    void absorb_common(const nlohmann::json& j);

    TokenCounter count_;
    std::function<void(const std::string&)> on_content_;
    std::function<double()> now_ms_;
    double t0_ = 0;
    RequestResult r_;
    double last_content_ = 0;
    int64_t chunks_ = 0;
    int events_ = 0;
    bool done_ = false;
    bool usage_seen_ = false;
    std::string failure_;
};

/// The message of a non-200 answer's body: the OpenAI error's "message"
/// (or a string "error") when the body is such a JSON object, else the
/// body's first 300 bytes on one line.
std::string http_error_text(std::string_view body);

/// `s` cut to `n` bytes ("..." appended when cut) with line breaks made
/// spaces: a server's text quoted inside one-line messages.
std::string shorten(std::string_view s, size_t n = 160);

}  // namespace wb::load
