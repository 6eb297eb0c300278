// The server's pure parts, with hand-worked expectations from OpenAI's API
// reference: the request-body parser (every field's type and range, the
// model name, defaults), the answer objects and SSE framing, the HTTP
// status rule, the bearer check, the loopback rule, and settings_json's
// log_settings merge.

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/finished_request.h"
#include "core/settings_json.h"
#include "server/api_error.h"
#include "server/auth.h"
#include "server/canary.h"
#include "server/http_status.h"
#include "server/request_parse.h"
#include "server/responses.h"

using namespace wb;
using nlohmann::json;

namespace {

server::ParseLimits limits() {
    server::ParseLimits l;
    l.model_name = "stories260K";
    l.default_max_tokens = 77;
    l.max_tokens_cap = 512;
    return l;
}

server::ParseResult parse_chat(const json& body) {
    return server::parse_completion_request(body.dump(), server::Route::ChatCompletions, limits());
}

json msgs() {
    return json::array({{{"role", "user"}, {"content", "Hi"}}});
}

}  // namespace

class TestServerParts : public QObject {
    Q_OBJECT
  private slots:
    void chat_request_with_defaults() {
        const auto r = parse_chat({{"model", "stories260K"}, {"messages", msgs()}, {"extra", 1}});
        QVERIFY(r.ok());
        const core::GenerationRequest& g = r.request->gen;
        QCOMPARE(g.messages.size(), size_t{1});
        QCOMPARE(g.messages[0].role, std::string("user"));
        QCOMPARE(g.messages[0].content, std::string("Hi"));
        QCOMPARE(g.chat_template, std::string("model"));
        QCOMPARE(g.max_tokens, 77);
        QCOMPARE(g.sampling.temperature, 1.0f);
        QCOMPARE(g.sampling.top_p, 1.0f);
        QCOMPARE(g.sampling.top_k, 0);
        QCOMPARE(g.sampling.min_p, 0.0f);
        QVERIFY(g.seed.policy == core::SeedPolicy::Random);
        QVERIFY(!r.request->stream);
    }
    void chat_request_fields() {
        const auto r = parse_chat(
            {{"model", "stories260K"},
             {"messages", json::array({{{"role", "developer"}, {"content", "Be"}},
                                       {{"role", "user"},
                                        {"content", json::array({
                                                        {{"type", "text"}, {"text", "a"}},
                                                        {{"type", "text"}, {"text", "b"}},
                                                    })}}})},
             {"max_tokens", 10},
             {"max_completion_tokens", 12},
             {"temperature", 0},
             {"top_p", 0.5},
             {"seed", 42},
             {"stop", "END"},
             {"n", 1},
             {"stream", true},
             {"stream_options", {{"include_usage", true}}},
             {"logprobs", true},
             {"top_logprobs", 3}});
        QVERIFY2(r.ok(), r.error.message.c_str());
        const core::GenerationRequest& g = r.request->gen;
        QCOMPARE(g.messages[0].role, std::string("system"));
        QCOMPARE(g.messages[1].content, std::string("ab"));
        QCOMPARE(g.max_tokens, 12);  // max_completion_tokens wins
        QCOMPARE(g.sampling.temperature, 0.0f);
        QCOMPARE(g.sampling.top_p, 0.5f);
        QVERIFY(g.seed.policy == core::SeedPolicy::Fixed);
        QCOMPARE(g.seed.value, uint64_t{42});
        QCOMPARE(g.stop, std::vector<std::string>{"END"});
        QVERIFY(r.request->stream && r.request->include_usage && r.request->logprobs);
        QCOMPARE(r.request->top_logprobs, 3);
    }
    void completion_prompts() {
        auto parse = [](const json& body) {
            return server::parse_completion_request(body.dump(), server::Route::Completions,
                                                    limits());
        };
        auto r = parse({{"model", "stories260K"}, {"prompt", "Once"}, {"logprobs", 2}});
        QVERIFY(r.ok());
        QCOMPARE(r.request->gen.prompt, std::string("Once"));
        QCOMPARE(r.request->top_logprobs, 2);
        r = parse({{"model", "stories260K"}, {"prompt", json::array({"Once"})}});
        QVERIFY(r.ok());
        QCOMPARE(r.request->gen.prompt, std::string("Once"));
        r = parse({{"model", "stories260K"}, {"prompt", json::array({1, 2, 3})}});
        QVERIFY(r.ok());
        QCOMPARE(r.request->gen.prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
        QVERIFY(!parse({{"model", "stories260K"}, {"prompt", json::array({"a", "b"})}}).ok());
        QVERIFY(!parse({{"model", "stories260K"}, {"prompt", 5}}).ok());
        QVERIFY(!parse({{"model", "stories260K"}, {"prompt", "x"}, {"logprobs", 6}}).ok());
    }
    void errors_name_the_field() {
        struct Case {
            json body;
            int status;
            const char* param;
        };
        const json m = msgs();
        const Case cases[] = {
            {{{"messages", m}}, 400, "model"},
            {{{"model", 3}, {"messages", m}}, 400, "model"},
            {{{"model", "gpt-4o"}, {"messages", m}}, 404, "model"},
            {{{"model", "stories260K"}}, 400, "messages"},
            {{{"model", "stories260K"}, {"messages", json::array()}}, 400, "messages"},
            {{{"model", "stories260K"}, {"messages", json::array({1})}}, 400, "messages[0]"},
            {{{"model", "stories260K"}, {"messages", m}, {"n", 2}}, 400, "n"},
            {{{"model", "stories260K"}, {"messages", m}, {"max_tokens", 0}}, 400, "max_tokens"},
            {{{"model", "stories260K"}, {"messages", m}, {"max_tokens", 513}}, 400, "max_tokens"},
            {{{"model", "stories260K"}, {"messages", m}, {"max_tokens", 1.5}}, 400, "max_tokens"},
            {{{"model", "stories260K"}, {"messages", m}, {"temperature", 2.5}}, 400, "temperature"},
            {{{"model", "stories260K"}, {"messages", m}, {"top_p", 0}}, 400, "top_p"},
            {{{"model", "stories260K"}, {"messages", m}, {"seed", "1"}}, 400, "seed"},
            {{{"model", "stories260K"},
              {"messages", m},
              {"stop", json::array({"a", "b", "c", "d", "e"})}},
             400,
             "stop"},
            {{{"model", "stories260K"}, {"messages", m}, {"stream", "yes"}}, 400, "stream"},
            {{{"model", "stories260K"},
              {"messages", m},
              {"stream_options", {{"include_usage", true}}}},
             400,
             "stream_options"},
            {{{"model", "stories260K"}, {"messages", m}, {"logprobs", 1}}, 400, "logprobs"},
            {{{"model", "stories260K"}, {"messages", m}, {"top_logprobs", 2}}, 400, "top_logprobs"},
        };
        for (const Case& c : cases) {
            const auto r = parse_chat(c.body);
            QVERIFY2(!r.ok(), c.body.dump().c_str());
            QCOMPARE(r.error.status, c.status);
            QCOMPARE(r.error.param, std::string(c.param));
            QVERIFY(!r.error.message.empty());
        }
        for (const char* bad : {"", "{", "[1,2]", "null", "\"x\"", "{\"model\":\"stories260K\","}) {
            const auto r =
                server::parse_completion_request(bad, server::Route::ChatCompletions, limits());
            QVERIFY2(!r.ok(), bad);
            QCOMPARE(r.error.status, 400);
        }
    }
    void error_body_shape() {
        server::ApiError e = server::invalid_request("bad", "n", "");
        QCOMPARE(server::error_body(e),
                 json::parse(R"({"error":{"message":"bad","type":"invalid_request_error",
                                 "param":"n","code":null}})"));
    }
    void answers_and_sse() {
        core::FinishedRequest f;
        f.prompt_tokens = {1, 2, 3};
        f.output_tokens = {4, 5};
        f.prompt_tokens_cached = 2;
        f.output = "hi";
        f.finish_reason = "context";
        server::AnswerIds ids{"chatcmpl-1", 1700000000, "stories260K",
                              server::Route::ChatCompletions};
        server::CompletionRequest req;
        const json full = server::full_response(ids, f, req);
        QCOMPARE(full["object"], json("chat.completion"));
        QCOMPARE(full["choices"][0]["message"]["content"], json("hi"));
        QCOMPARE(full["choices"][0]["finish_reason"], json("length"));
        QCOMPARE(full["choices"][0]["logprobs"], json(nullptr));
        QCOMPARE(full["usage"], json::parse(R"({"prompt_tokens":3,"completion_tokens":2,
            "total_tokens":5,"prompt_tokens_details":{"cached_tokens":2}})"));
        // Timings, worked by hand: submitted 100, admitted 130, first token
        // 180, last 205 (ms) -> queue 30, ttft 80, prompt 50, predicted 25.
        QCOMPARE(full["timings"], json::parse(R"({"queue_ms":null,"ttft_ms":null,"prompt_n":0,
            "cache_n":2,"prompt_ms":null,"predicted_n":2,"predicted_ms":null})"));
        f.prompt_tokens_computed = 1;
        f.times.submitted_ms = 100;
        f.times.admitted_ms = 130;
        f.times.first_token_ms = 180;
        f.times.last_token_ms = 205;
        f.times.finished_ms = 206;
        const json t = json::parse(R"({"queue_ms":30.0,"ttft_ms":80.0,"prompt_n":1,"cache_n":2,
            "prompt_ms":50.0,"predicted_n":2,"predicted_ms":25.0})");
        QCOMPARE(server::timings_json(f), t);
        QCOMPARE(server::finish_chunk(ids, f, req, false)["timings"], t);
        QCOMPARE(server::full_response(ids, f, req)["timings"], t);
        // Scheduler passes: "next" follows the last pass, and never points
        // past the passes recorded ("end") when there are none to give.
        wb::metrics::PassTelemetry pt;
        pt.index = 4;
        pt.batch = 2;
        QCOMPARE(server::passes_json("m", {pt}, 1.0, 4, 9)["next"], json(5));
        QCOMPARE(server::passes_json("m", {}, 1.0, 99999, 9)["next"], json(9));
        QCOMPARE(server::passes_json("m", {}, 1.0, 3, 9)["next"], json(3));
        QCOMPARE(server::passes_json("m", {pt}, 1.0, 4, 9)["passes"][0][3], json(2));
        const json first = server::text_chunk(ids, "a", true, true);
        QCOMPARE(first["choices"][0]["delta"],
                 json::parse(R"({"role":"assistant","content":"a"})"));
        QVERIFY(first.contains("usage") && first["usage"].is_null());
        QCOMPARE(server::usage_chunk(ids, f)["choices"], json::array());
        QCOMPARE(server::sse_event(json{{"a", 1}}), std::string("data: {\"a\":1}\n\n"));
        QCOMPARE(server::sse_done(), std::string("data: [DONE]\n\n"));
    }
    void http_status_rule() {
        core::FinishedRequest f;
        f.refused = true;
        f.finish_reason = "rejected";
        QCOMPARE(server::http_status_of(f), 429);
        f.finish_reason = "error";
        QCOMPARE(server::http_status_of(f), 400);
        f.refused = false;
        QCOMPARE(server::http_status_of(f), 500);
        f.settings["stream"] = true;
        QCOMPARE(server::http_status_of(f), 200);
        f.settings["stream"] = false;
        f.finish_reason = "timeout";
        QCOMPARE(server::http_status_of(f), 504);
        f.finish_reason = "length";
        QCOMPARE(server::http_status_of(f), 200);
    }
    void auth_rules() {
        QVERIFY(server::bearer_matches("Bearer k3y", "k3y"));
        QVERIFY(server::bearer_matches("bearer k3y", "k3y"));
        QVERIFY(!server::bearer_matches("Bearer k3", "k3y"));
        QVERIFY(!server::bearer_matches("Bearer k3yy", "k3y"));
        QVERIFY(!server::bearer_matches("Basic k3y", "k3y"));
        QVERIFY(!server::bearer_matches("", "k3y"));
        QVERIFY(server::bearer_matches("", ""));
        QVERIFY(server::constant_time_equal("", ""));
        QVERIFY(!server::constant_time_equal("a", ""));
        QVERIFY(!server::constant_time_equal("", "a"));
        for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "localhost"})
            QVERIFY2(server::is_loopback_host(h), h);
        for (const char* h : {"0.0.0.0", "::", "192.168.1.2", "127.0.0.1.example.com", "127.0.0"})
            QVERIFY2(!server::is_loopback_host(h), h);
    }
    void log_settings_merge() {
        core::GenerationRequest r;
        r.prompt = "x";
        r.log_settings = {{"api_route", "/v1/completions"}, {"max_tokens", 9999}};
        const json j = core::settings_json(r, 1, core::EngineFacts{});
        QCOMPARE(j["api_route"], json("/v1/completions"));
        QCOMPARE(j["max_tokens"], json(128));  // the standard key keeps its value
    }

    void shadow_drift_by_hand() {
        using wb::core::TokenLogprobs;
        const double ln = std::log(2.0);
        // Stable [1, 2, 3], canary [1, 2, 4]: 2 of the canary's 3 tokens agree.
        // Step 0: stable p(1) = 1/2, p(2) = 1/4; canary p(1) = 1/4, p(2) = 1/2:
        // KL = 1/2 ln(2) + 1/4 ln(1/2) = ln(2) / 4. Steps 1 and 2 (the first
        // divergence, same context) are identical: 0. Mean over 3 steps.
        auto step = [](int32_t tok, float lp, std::vector<std::pair<int32_t, float>> top) {
            TokenLogprobs t;
            t.token = tok;
            t.logprob = lp;
            for (const auto& [id, v] : top) t.top.push_back({id, v});
            return t;
        };
        const float h = static_cast<float>(std::log(0.5)), q = static_cast<float>(std::log(0.25));
        const std::vector<TokenLogprobs> s = {step(1, h, {{1, h}, {2, q}}),
                                              step(2, h, {{2, h}, {5, q}}),
                                              step(3, h, {{3, h}, {4, q}})};
        const std::vector<TokenLogprobs> c = {step(1, q, {{2, h}, {1, q}}),
                                              step(2, h, {{2, h}, {5, q}}),
                                              step(4, q, {{3, h}, {4, q}})};
        wb::rollout::Drift d = wb::server::shadow_drift({1, 2, 3}, s, {1, 2, 4}, c);
        QVERIFY(std::abs(d.token_agreement - 2.0 / 3.0) < 1e-12);
        QVERIFY2(std::abs(d.mean_kld - ln / 4 / 3) < 1e-6, qPrintable(QString::number(d.mean_kld)));
        // A token the canary does not list takes its smallest listed log-prob:
        // stable p(7) = 1/2 at step 0 against the canary's floor ln(1/4):
        // KL = 1/2 (ln 1/2 - ln 1/4) = ln(2) / 2, one step (then the outputs differ).
        const std::vector<TokenLogprobs> s2 = {step(7, h, {{7, h}})};
        d = wb::server::shadow_drift({7}, s2, {1}, {c[0]});
        QCOMPARE(d.token_agreement, 0.0);
        QVERIFY2(std::abs(d.mean_kld - ln / 2) < 1e-6, qPrintable(QString::number(d.mean_kld)));
        // Identical answers: agreement 1, KLD 0.
        d = wb::server::shadow_drift({1, 2, 3}, s, {1, 2, 3}, s);
        QCOMPARE(d.token_agreement, 1.0);
        QCOMPARE(d.mean_kld, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestServerParts)
#include "test_server_parts.moc"
