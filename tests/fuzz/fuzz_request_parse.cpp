// fuzz_request_parse: arbitrary bytes as the body of POST
// /v1/chat/completions and /v1/completions -> parse_completion_request
// (app/server/request_parse.h), under the documented contract: either a
// request whose fields are within the documented ranges, or a 400/404 error
// with a message. For a body that parses, the whole answer is built from a
// made-up FinishedRequest (output text and logprobs taken from the input
// bytes, so invalid UTF-8 and every token of the real stories260K vocab
// reach the JSON writer): the non-streaming body, the text, finish and
// usage chunks as server-sent events. Every body must dump as JSON that
// parses back, and every event must be one "data: ...\n\n" line (a newline
// inside would split the event for the client).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gguf/gguf.h"
#include "server/api_error.h"
#include "server/request_parse.h"
#include "server/responses.h"
#include "tokenizer/vocab.h"

namespace {

using json = nlohmann::json;
using namespace wb::server;

const wb::tokenizer::Vocab& vocab() {
    static const wb::tokenizer::Vocab v = wb::tokenizer::Vocab::from_gguf(
        wb::gguf::File::open(WB_TEST_DATA_DIR "/models/stories260K.gguf"));
    return v;
}

[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "%s\n", what);
    std::abort();
}

void require(bool ok, const char* what) {
    if (!ok) finding(what);
}

// The server dumps every answer this way (server.cpp): invalid UTF-8 replaced.
std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void require_round_trip(const std::string& text) {
    require(json::accept(text), "an answer body does not parse back as JSON");
}

void require_event(const std::string& ev) {
    require(ev.rfind("data: ", 0) == 0, "an event does not start with 'data: '");
    require(ev.size() >= 8 && ev.compare(ev.size() - 2, 2, "\n\n") == 0,
            "an event does not end with a blank line");
    const std::string_view payload(ev.data() + 6, ev.size() - 8);
    require(payload.find_first_of("\r\n") == std::string_view::npos,
            "an event's JSON spans lines (the client would split it)");
    require(json::accept(payload), "an event's data is not JSON");
}

void check_request(const CompletionRequest& r, const ParseLimits& limits) {
    const auto& g = r.gen;
    require(g.max_tokens >= 1 && g.max_tokens <= limits.max_tokens_cap, "max_tokens out of range");
    require(g.sampling.temperature >= 0.0f && g.sampling.temperature <= 2.0f,
            "temperature out of range");
    require(g.sampling.top_p > 0.0f && g.sampling.top_p <= 1.0f, "top_p out of range");
    require(g.stop.size() <= 4, "more than 4 stop strings");
    require(!r.include_usage || r.stream, "include_usage without stream");
    if (r.route == Route::ChatCompletions) {
        require(!g.messages.empty(), "chat request without messages");
        require(r.top_logprobs >= 0 && r.top_logprobs <= 20, "top_logprobs out of range");
        require(r.top_logprobs == 0 || r.logprobs, "top_logprobs without logprobs");
    } else {
        require(g.messages.empty(), "completion request with messages");
        require(r.top_logprobs >= 0 && r.top_logprobs <= 5, "logprobs out of range");
    }
}

// A made-up end of the request: the input's bytes as the output text and as
// token ids (within the vocab, as the engine's are), one logprob step per id
// with up to top_logprobs alternatives, some of them -inf.
wb::core::FinishedRequest made_up_result(const CompletionRequest& r, std::string_view input) {
    wb::core::FinishedRequest f;
    const int32_t n_vocab = vocab().n_tokens();
    f.finish_reason = input.size() % 3 == 0 ? "stop" : input.size() % 3 == 1 ? "length" : "context";
    f.output = std::string(input.substr(0, 64));
    f.prompt_tokens = r.gen.prompt_tokens;
    f.prompt_tokens_cached = static_cast<int32_t>(f.prompt_tokens.size() / 2);
    for (size_t i = 0; i < input.size() && i < 16; ++i) {
        const int32_t id = static_cast<unsigned char>(input[i]) % n_vocab;
        f.output_tokens.push_back(id);
        wb::core::TokenLogprobs step;
        step.token = id;
        step.logprob = i % 5 == 4 ? -INFINITY : -0.25f * static_cast<float>(i);
        for (int32_t k = 0; k < r.top_logprobs; ++k)
            step.top.push_back({(id + k * 7) % n_vocab, k == 3 ? -INFINITY : -0.5f * k});
        f.logprobs.push_back(std::move(step));
    }
    return f;
}

void check_answer(const CompletionRequest& r, std::string_view input) {
    const wb::core::FinishedRequest f = made_up_result(r, input);
    AnswerIds ids;
    ids.id = r.route == Route::ChatCompletions ? "chatcmpl-1" : "cmpl-1";
    ids.created = 1700000000;
    ids.model = "stories260K";
    ids.route = r.route;
    ids.vocab = input.size() % 4 == 0 ? nullptr : &vocab();

    require_round_trip(dump(full_response(ids, f, r)));
    const bool usage_null = r.include_usage;
    require_event(sse_event(text_chunk(ids, f.output, true, usage_null)));
    require_event(
        sse_event(text_chunk(ids, f.output.substr(f.output.size() / 2), false, usage_null)));
    require_event(sse_event(finish_chunk(ids, f, r, usage_null)));
    require_event(sse_event(usage_chunk(ids, f)));
    require(sse_done() == "data: [DONE]\n\n", "the stream's end changed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    ParseLimits limits;
    limits.model_name = "stories260K";
    limits.default_max_tokens = 64;
    limits.max_tokens_cap = 512;
    for (const Route route : {Route::ChatCompletions, Route::Completions}) {
        const ParseResult res = parse_completion_request(body, route, limits);
        if (res.ok()) {
            require(res.request->route == route, "parsed for the wrong route");
            check_request(*res.request, limits);
            check_answer(*res.request, body);
            continue;
        }
        const ApiError& e = res.error;
        require(e.status == 400 || e.status == 404, "a bad body answered neither 400 nor 404");
        require(!e.message.empty(), "an error without a message");
        require(e.type == "invalid_request_error",
                "a bad body's error type is not invalid_request_error");
        require_round_trip(dump(error_body(e)));
    }
    return 0;
}
