// The one request path (app/core) on the real stories260K model and its
// tokenizer, CPU reference backend. Expected tokens come from llama.cpp's
// golden file (tests/data/golden/stories260K_greedy.jsonl); seeds, ids and
// settings from the rules the headers state, worked by hand here. Nothing
// asserts on timing.

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "chat/chat_template.h"
#include "common/data_dir.h"
#include "common/golden2.h"
#include "common/greedy_golden.h"
#include "core/batch_runner.h"
#include "core/engine_session.h"
#include "core/prompt_file.h"
#include "core/response_log.h"
#include "core/session_run.h"
#include "core/settings_json.h"
#include "runlog/run_log.h"

using namespace wb;
using namespace std::chrono_literals;

namespace {

const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

std::unique_ptr<core::EngineSession> open_session(uint32_t n_slots, uint32_t cells_per_slot = 256) {
    core::SessionOptions so;
    so.load.backend = "cpu";
    so.load.context.n_ctx = n_slots * cells_per_slot;
    so.load.context.n_seq_max = n_slots;
    return core::EngineSession::open(kModel, so);
}

/// Collects the events of one request (engine thread) for the test thread.
struct Collector {
    std::mutex mu;
    std::vector<core::RequestEvent> events;
    core::EventSink sink() {
        return [this](const core::RequestEvent& e) {
            std::lock_guard lock(mu);
            events.push_back(e);
        };
    }
    std::shared_ptr<const core::FinishedRequest> result() {
        std::lock_guard lock(mu);
        for (const auto& e : events)
            if (e.type == core::RequestEvent::Type::Finished) return e.result;
        return nullptr;
    }
    /// The Started event's snapshot (null when it never started).
    std::shared_ptr<const core::FinishedRequest> started() {
        std::lock_guard lock(mu);
        for (const auto& e : events)
            if (e.type == core::RequestEvent::Type::Started) return e.result;
        return nullptr;
    }
    std::vector<int32_t> tokens() {
        std::lock_guard lock(mu);
        std::vector<int32_t> t;
        for (const auto& e : events)
            if (e.type == core::RequestEvent::Type::Token) t.push_back(e.token);
        return t;
    }
};

core::GenerationRequest greedy(const wbtest::GreedyGolden& g) {
    core::GenerationRequest r;
    r.prompt = g.prompt;
    r.max_tokens = 48;
    r.ignore_eos = true;  // the golden run had no stop condition
    r.sampling.temperature = 0.0f;
    r.label = "golden-" + std::to_string(g.id);
    return r;
}

/// One value of a query on a SQLite file (independent of the run-log code).
std::string sql_text(const std::string& db, const std::string& query) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    std::string out = "<error>";
    if (sqlite3_prepare_v2(h, query.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(st, 0);
        out = t ? reinterpret_cast<const char*>(t) : "<null>";
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

}  // namespace

class TestCore : public QObject {
    Q_OBJECT

  private:
    std::vector<wbtest::GreedyGolden> golden_;
    QTemporaryDir dir_;

  private slots:
    void initTestCase() {
        golden_ = wbtest::read_greedy_golden();
        QVERIFY(golden_.size() >= 3);
        QVERIFY(dir_.isValid());
    }

    // Two requests on one session, each with its own sink: each sink sees
    // only its request's events, in order, and the tokens are llama.cpp's.
    void each_request_has_its_own_sink() {
        auto s = open_session(2);
        Collector a, b;
        const core::RequestHandle ha = s->submit(greedy(golden_[0]), a.sink());
        const core::RequestHandle hb = s->submit(greedy(golden_[1]), b.sink());
        QVERIFY(ha.accepted() && hb.accepted());
        QVERIFY(ha.id() != hb.id());
        QVERIFY(s->wait_idle(120s));
        for (auto [c, h, g] : {std::tuple{&a, ha, &golden_[0]}, std::tuple{&b, hb, &golden_[1]}}) {
            std::lock_guard lock(c->mu);
            QCOMPARE(c->events.front().type, core::RequestEvent::Type::Queued);
            QCOMPARE(c->events.back().type, core::RequestEvent::Type::Finished);
            for (const auto& e : c->events) QCOMPARE(e.id, h.id());
        }
        QCOMPARE(a.tokens(), golden_[0].generated);
        QCOMPARE(b.tokens(), golden_[1].generated);
        const auto fa = a.result();
        QCOMPARE(fa->output_tokens, golden_[0].generated);
        QCOMPARE(fa->prompt_tokens, golden_[0].prompt_ids);
        QCOMPARE(fa->output, golden_[0].text);
        QCOMPARE(fa->finish_reason, std::string("length"));
        QCOMPARE(fa->label, std::string("golden-0"));
        QCOMPARE(s->in_flight(), size_t{0});
    }

    // The seed used is reported back for every policy: fixed = the value,
    // base+index = value + index, random = some draw, the same one the
    // result and its settings name; a fixed request with that seed repeats
    // the random one's tokens.
    void seed_policies_report_the_seed_used() {
        auto s = open_session(1);
        auto sampled = [](core::SeedSpec seed) {
            core::GenerationRequest r;
            r.prompt = "Lily went to the park";
            r.max_tokens = 24;
            r.ignore_eos = true;
            r.sampling.temperature = 1.0f;  // a real draw: the seed matters
            r.seed = seed;
            return r;
        };
        Collector fixed, indexed, random, again;
        const auto hf = s->submit(sampled({core::SeedPolicy::Fixed, 77, 5}), fixed.sink());
        const auto hi =
            s->submit(sampled({core::SeedPolicy::BasePlusIndex, 77, 5}), indexed.sink());
        const auto hr = s->submit(sampled({core::SeedPolicy::Random, 77, 5}), random.sink());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(hf.seed(), uint64_t{77});
        QCOMPARE(hi.seed(), uint64_t{82});
        QCOMPARE(fixed.result()->seed, uint64_t{77});
        QCOMPARE(indexed.result()->seed, uint64_t{82});
        QCOMPARE(random.result()->seed, hr.seed());
        QVERIFY(hr.seed() < (uint64_t{1} << 63));
        QCOMPARE(random.result()->settings["seed"].get<uint64_t>(), hr.seed());
        QCOMPARE(random.result()->settings["seed_policy"].get<std::string>(),
                 std::string("random"));
        QCOMPARE(indexed.result()->settings["seed_policy"].get<std::string>(),
                 std::string("base+index"));
        s->submit(sampled({core::SeedPolicy::Fixed, hr.seed(), 0}), again.sink());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(again.tokens(), random.tokens());
    }

    // A sequence past the model's training context
    // (the tiny llama-spm model: n_ctx_train 512) on a larger pool (2048) runs, and the
    // session says so: before submitting when the prompt alone is longer
    // (PreparedRequest::prompt_past_n_ctx_train), in the result when prompt
    // + output passed it (FinishedRequest::past_n_ctx_train), and in the
    // run-log row's settings; a short request carries no flag.
    void past_the_training_context_is_flagged() {
        core::SessionOptions so;
        so.load.backend = "cpu";
        so.load.context.n_ctx = 2048;
        so.load.context.n_seq_max = 1;
        auto s = core::EngineSession::open(
            wbtest::data_dir() + "/golden2/llama-spm/llama-spm-f16.gguf", so);
        QCOMPARE(s->model().hparams().n_ctx_train, uint32_t{512});
        auto request = [](int sentences, int32_t max_tokens) {
            core::GenerationRequest r;
            for (int i = 0; i < sentences; ++i) r.prompt += "Lily went to the park with her mom. ";
            r.max_tokens = max_tokens;
            r.ignore_eos = true;
            r.sampling.temperature = 0.0f;
            return r;
        };
        // Long: the prompt alone is past 512 tokens.
        const core::PreparedRequest long_p = s->prepare(request(80, 4));
        QVERIFY(long_p.ok());
        QVERIFY(long_p.prompt_tokens().size() > 512);
        QCOMPARE(long_p.n_ctx_train(), uint32_t{512});
        QVERIFY(long_p.prompt_past_n_ctx_train());
        // Short: well inside.
        const core::PreparedRequest short_p = s->prepare(request(2, 4));
        QVERIFY(short_p.ok());
        QVERIFY(!short_p.prompt_past_n_ctx_train());
        // Edge: the prompt fits, prompt + output goes past.
        const size_t per_sentence = long_p.prompt_tokens().size() / 80;
        const int fit = static_cast<int>(500 / std::max<size_t>(per_sentence, 1));
        const core::PreparedRequest edge_p = s->prepare(request(fit, 40));
        QVERIFY(edge_p.ok());
        QVERIFY(edge_p.prompt_tokens().size() <= 512);
        QVERIFY(edge_p.prompt_tokens().size() + 40 > 512);
        QVERIFY(!edge_p.prompt_past_n_ctx_train());

        Collector long_c, short_c, edge_c;
        s->submit(long_p, long_c.sink());
        s->submit(short_p, short_c.sink());
        s->submit(edge_p, edge_c.sink());
        QVERIFY(s->wait_idle(120s));
        const auto lf = long_c.result(), sf = short_c.result(), ef = edge_c.result();
        QVERIFY(lf && sf && ef);
        QCOMPARE(lf->finish_reason, std::string("length"));
        QCOMPARE(ef->finish_reason, std::string("length"));
        QCOMPARE(lf->n_ctx_train, uint32_t{512});
        QVERIFY(lf->past_n_ctx_train);
        QVERIFY(long_c.started() && long_c.started()->past_n_ctx_train);
        QVERIFY(!sf->past_n_ctx_train);
        QVERIFY(ef->past_n_ctx_train);
        QVERIFY(!edge_c.started()->past_n_ctx_train);  // at admission only the prompt counts

        // The run-log row: the flag (and the context it passed) in settings.
        const runlog::ResponseRecord lr = core::response_record(*lf, {});
        QCOMPARE(lr.settings.value("past_n_ctx_train", false), true);
        QCOMPARE(lr.settings.value("n_ctx_train", 0), 512);
        const runlog::ResponseRecord sr = core::response_record(*sf, {});
        QVERIFY(!sr.settings.contains("past_n_ctx_train"));
        QVERIFY(!sr.settings.contains("n_ctx_train"));
    }

    // A chat request is rendered by the session's chat template (app/chat:
    // the model's own tokenizer.chat_template) and tokenized with special
    // tokens parsed: the prompt ids are llama.cpp's for the same
    // conversation (its golden `chat` record of the tiny Qwen2.5 model), and
    // the result says how the ids were made. An invalid request is refused
    // with a Finished event; after shutdown the sink hears at once.
    void chat_invalid_and_after_shutdown() {
        const std::string model = wbtest::data_dir() + "/golden2/qwen2/qwen2-f16.gguf";
        const nlohmann::json doc = nlohmann::json::parse(
            std::ifstream(wbtest::data_dir() + "/golden2/qwen2/goldens/f16.llamacpp.kvf32.json"));
        nlohmann::json rec;
        for (const nlohmann::json& r : doc["results"])
            if (r["name"] == "chat") rec = r;
        QVERIFY(rec.is_object());
        core::SessionOptions so;
        so.load.backend = "cpu";
        so.load.context.n_ctx = 256;
        so.load.context.n_seq_max = 1;
        auto s = core::EngineSession::open(model, so);
        QCOMPARE(s->chat_template("model")->tmpl.name(), std::string("model"));
        QVERIFY(s->chat_template("model")->note.empty());
        core::GenerationRequest chat;
        for (const nlohmann::json& m : rec["messages"])
            chat.messages.push_back(
                {m["role"].get<std::string>(), m["content"].get<std::string>()});
        chat.max_tokens = 2;
        chat.sampling.temperature = 0.0f;
        Collector c, bad, late;
        s->submit(chat, c.sink());
        core::GenerationRequest two = chat;
        two.prompt = "also a prompt";  // two prompt forms
        const auto hb = s->submit(two, bad.sink());
        QVERIFY(!hb.accepted());
        QVERIFY(s->wait_idle(120s));
        const auto f = c.result();
        QVERIFY(f);
        QCOMPARE(f->prompt, rec["rendered"].get<std::string>());
        const std::vector<int32_t> want = rec["prompt_ids"].get<std::vector<int32_t>>();
        QCOMPARE(f->prompt_tokens, want);
        QCOMPARE(f->mode, core::PromptMode::Chat);
        QCOMPARE(f->settings["prompt_mode"].get<std::string>(), std::string("chat"));
        QCOMPARE(f->settings["chat_template"].get<std::string>(), std::string("model"));
        QCOMPARE(f->settings["chat_template_sha256"].get<std::string>().size(), size_t{64});
        QCOMPARE(f->settings["parse_special"].get<bool>(), true);
        QVERIFY(!s->vocab().pre_family().empty());
        QCOMPARE(f->settings["pre_tokenizer"].get<std::string>(), s->vocab().pre_family());
        QCOMPARE(f->messages.size(), size_t{3});
        const auto fb = bad.result();
        QVERIFY(fb);
        QCOMPARE(fb->finish_reason, std::string("error"));
        QVERIFY(fb->refused);
        QVERIFY(fb->message.find("not several") != std::string::npos);
        s->shutdown();
        const auto hl = s->submit(chat, late.sink());
        QVERIFY(!hl.accepted());
        QVERIFY(late.result());  // delivered before submit returned
        QCOMPARE(late.result()->finish_reason, std::string("error"));
    }

    // A prompt longer than the context is refused with a typed kind
    // (PromptTooLong, context_full()) that callers act on; other refusals
    // (no prompt, max_tokens 0) have no kind and are not context_full.
    void prompt_too_long_is_typed() {
        auto s = open_session(1, 32);
        core::GenerationRequest lng;
        for (int i = 0; i < 40; ++i) lng.prompt += "Once upon a time ";
        core::GenerationRequest zero;
        zero.prompt = "Hi";
        zero.max_tokens = 0;
        Collector a, b;
        QVERIFY(!s->submit(lng, a.sink()).accepted());
        QVERIFY(!s->submit(zero, b.sink()).accepted());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(a.result()->finish_reason, std::string("error"));
        QCOMPARE(a.result()->error_kind, scheduler::ErrorKind::PromptTooLong);
        QVERIFY(a.result()->context_full());
        QCOMPARE(b.result()->finish_reason, std::string("error"));
        QCOMPARE(b.result()->error_kind, scheduler::ErrorKind::None);
        QVERIFY(!b.result()->context_full());
    }

    // The chat template is the request's, not the session's: two requests
    // in flight together on one session, one naming the model's own
    // template and one a built-in, are each rendered with theirs (the
    // built-in's rendering worked out by app/chat directly), and the
    // session caches one parsed template per name. An unknown name refuses
    // only its own request.
    void template_per_request() {
        const std::string model = wbtest::data_dir() + "/golden2/qwen2/qwen2-f16.gguf";
        core::SessionOptions so;
        so.load.backend = "cpu";
        so.load.context.n_ctx = 512;
        so.load.context.n_seq_max = 2;
        auto s = core::EngineSession::open(model, so);
        core::GenerationRequest own;
        own.messages = {{"system", "Be brief."}, {"user", "Hi"}};
        own.max_tokens = 2;
        own.sampling.temperature = 0.0f;
        own.chat_template = "model";
        core::GenerationRequest llama3 = own;
        llama3.chat_template = "llama3";
        core::GenerationRequest unknown = own;
        unknown.chat_template = "no-such-format";
        Collector a, b, c;
        s->submit(own, a.sink());
        s->submit(llama3, b.sink());
        const core::RequestHandle hc = s->submit(unknown, c.sink());
        QVERIFY(!hc.accepted());
        QVERIFY(s->wait_idle(120s));
        const auto fa = a.result(), fb = b.result(), fc = c.result();
        QVERIFY(fa && fb && fc);
        QCOMPARE(fa->settings["chat_template"].get<std::string>(), std::string("model"));
        QCOMPARE(fb->settings["chat_template"].get<std::string>(), std::string("llama3"));
        const chat::ChatPrompt want_own =
            chat::build_prompt(s->chat_template("model")->tmpl, s->vocab(), own.messages, true);
        const chat::ChatPrompt want_llama3 =
            chat::build_prompt(chat::ChatTemplate::builtin(chat::BuiltinFormat::Llama3), s->vocab(),
                               llama3.messages, true);
        QVERIFY(want_own.text != want_llama3.text);
        QCOMPARE(fa->prompt, want_own.text);
        QCOMPARE(fa->prompt_tokens, want_own.ids);
        QCOMPARE(fb->prompt, want_llama3.text);
        QCOMPARE(fb->prompt_tokens, want_llama3.ids);
        QCOMPARE(fc->finish_reason, std::string("error"));
        QVERIFY(fc->message.find("no-such-format") != std::string::npos);
        // One parse per name: the same object every time ("" is "model").
        QCOMPARE(s->chat_template("llama3").get(), s->chat_template("llama3").get());
        QCOMPARE(s->chat_template("").get(), s->chat_template("model").get());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, s->chat_template("no-such-format"));
    }

    // prepare() renders what submit runs: a prepared chat request's ids and
    // text are the ones the request runs with, and the same request
    // submitted unprepared gives the same; a prepared request that cannot
    // run says why and submitting it is refused with that reason.
    void prepare_is_what_runs() {
        const std::string model = wbtest::data_dir() + "/golden2/qwen2/qwen2-f16.gguf";
        core::SessionOptions so;
        so.load.backend = "cpu";
        so.load.context.n_ctx = 256;
        so.load.context.n_seq_max = 1;
        auto s = core::EngineSession::open(model, so);
        core::GenerationRequest req;
        req.messages = {{"user", "Say something."}};
        req.chat_template = "chatml";
        req.max_tokens = 2;
        req.sampling.temperature = 0.0f;
        const core::PreparedRequest p = s->prepare(req);
        QVERIFY2(p.ok(), p.problem().c_str());
        QCOMPARE(p.session_id(), s->session_id());
        QCOMPARE(p.prompt_facts().template_name, std::string("chatml"));
        QVERIFY(!p.prompt_tokens().empty());
        Collector via_prepared, direct;
        s->submit(p, via_prepared.sink());
        s->submit(req, direct.sink());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(via_prepared.result()->prompt_tokens, p.prompt_tokens());
        QCOMPARE(via_prepared.result()->prompt, p.prompt());
        QCOMPARE(via_prepared.started()->prompt_tokens, p.prompt_tokens());
        QCOMPARE(direct.result()->prompt_tokens, p.prompt_tokens());
        QCOMPARE(direct.result()->settings, via_prepared.result()->settings);

        core::GenerationRequest raw;
        raw.prompt = "Once upon a time";
        const core::PreparedRequest pr = s->prepare(raw);
        QVERIFY(pr.ok());
        QCOMPARE(pr.prompt(), raw.prompt);
        QCOMPARE(pr.prompt_tokens(), s->vocab().tokenize(raw.prompt, true));

        core::GenerationRequest bad = req;
        bad.chat_template = "no-such-format";
        const core::PreparedRequest pb = s->prepare(bad);
        QVERIFY(!pb.ok());
        QVERIFY(pb.prompt_tokens().empty());
        Collector refused;
        QVERIFY(!s->submit(pb, refused.sink()).accepted());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(refused.result()->message, pb.problem());
    }

    // The next turn of a chat reuses the reply as generated: its prompt
    // starts with turn 1's prompt ids and generated ids (which a fresh
    // tokenization of the rendered history does not reproduce), spells the
    // same text, and the prefix cache covers every full KV block of them
    // (hand-worked: the pool's blocks are 16 cells; turn 1 fed its prompt
    // and all but its last generated token).
    void chat_next_turn_keeps_the_reply_ids() {
        // Tiny models reply with odd text: use the first (model, prompt)
        // whose reply is whole UTF-8 (so the history holds exactly the text
        // its ids spell) and whose ids a fresh tokenization does not give
        // back (the case that matters; else keeping them changes nothing).
        const std::vector<std::string> models = {"qwen2", "llama3", "qwen3", "smollm-fallback"};
        const std::vector<std::string> prompts = {"Tell me a story about a dragon.", "Hello!",
                                                  "Write a poem about the sea.", "What is 2+2?"};
        decltype(core::EngineSession::open("", {})) s;
        std::shared_ptr<const core::FinishedRequest> r1;
        core::GenerationRequest t2;
        std::vector<int32_t> kept, fresh;
        for (size_t i = 0; i < models.size() * prompts.size() && !r1; ++i) {
            core::SessionOptions so;
            so.load.backend = "cpu";
            so.load.context.n_ctx = 512;
            so.load.context.n_seq_max = 1;
            s = core::EngineSession::open(wbtest::golden2_model(models[i / prompts.size()]), so);
            QCOMPARE(s->model().context().kv_block_size, 16u);
            core::GenerationRequest t1;
            t1.messages = {{"user", prompts[i % prompts.size()]}};
            t1.chat_template = "chatml";
            t1.max_tokens = 24;
            t1.sampling.temperature = 0.0f;
            Collector c1;
            s->submit(t1, c1.sink());
            QVERIFY(s->wait_idle(120s));
            const auto r = c1.result();
            QVERIFY(r && !r->output_tokens.empty());
            if (s->vocab().detokenize(r->output_tokens, false, true) != r->output) continue;
            kept = r->prompt_tokens;
            kept.insert(kept.end(), r->output_tokens.begin(), r->output_tokens.end());
            t2 = t1;
            t2.messages.push_back({"assistant", r->output});
            t2.messages.push_back({"user", "Go on."});
            fresh =
                chat::build_prompt(s->chat_template("chatml")->tmpl, s->vocab(), t2.messages, true)
                    .ids;
            const bool fresh_keeps_them =
                fresh.size() >= kept.size() && std::equal(kept.begin(), kept.end(), fresh.begin());
            if (!fresh_keeps_them) {
                qInfo("%s, \"%s\": %zu prompt + %zu reply ids", models[i / prompts.size()].c_str(),
                      prompts[i % prompts.size()].c_str(), r->prompt_tokens.size(),
                      r->output_tokens.size());
                r1 = r;
            }
        }
        QVERIFY2(r1, "no model and prompt gave a whole-UTF-8 reply that re-tokenizes differently");
        const core::PreparedRequest p2 = s->prepare(t2);
        QVERIFY2(p2.ok(), p2.problem().c_str());
        const std::vector<int32_t>& ids = p2.prompt_tokens();
        QVERIFY2(ids.size() > kept.size() && std::equal(kept.begin(), kept.end(), ids.begin()),
                 "turn 2's prompt does not start with turn 1's prompt and reply ids");
        QCOMPARE(s->vocab().detokenize(ids, false, true),
                 s->vocab().detokenize(fresh, false, true));
        Collector c2;
        s->submit(p2, c2.sink());
        QVERIFY(s->wait_idle(120s));
        const auto r2 = c2.result();
        QVERIFY(r2);
        QCOMPARE(r2->prompt_tokens, ids);
        // Turn 1 fed its prompt and all but its last generated token: the
        // cache covers at least their full blocks, at most all of them, and
        // more than a fresh tokenization shares with them.
        const int32_t fed = static_cast<int32_t>(kept.size()) - 1;
        const auto shared = static_cast<int32_t>(
            std::mismatch(kept.begin(), kept.end(), fresh.begin(), fresh.end()).first -
            kept.begin());
        qInfo("cached %d of %d fed; a fresh tokenization shares %d", r2->prompt_tokens_cached, fed,
              shared);
        QVERIFY(r2->prompt_tokens_cached >= fed / 16 * 16);
        QVERIFY(r2->prompt_tokens_cached <= fed);
        QVERIFY(r2->prompt_tokens_cached > shared);
    }

    // Per-client concurrency set on the session while a request of another
    // client runs: no reload, and the other client is not held back.
    void client_limit_changes_live() {
        auto s = open_session(3);
        s->set_client_limit("batch", 1);
        QCOMPARE(s->admission().client_limit("batch"), uint32_t{1});
        std::vector<std::unique_ptr<Collector>> cs;
        std::vector<core::RequestHandle> hs;
        for (int i = 0; i < 3; ++i) {
            core::GenerationRequest r = greedy(golden_[size_t(i)]);
            r.client_id = i < 2 ? "batch" : "chat";
            cs.push_back(std::make_unique<Collector>());
            hs.push_back(s->submit(r, cs.back()->sink()));
        }
        QVERIFY(s->wait_idle(120s));
        // batch #2 waited for batch #1 (limit 1); chat did not wait.
        const auto f0 = cs[0]->result(), f1 = cs[1]->result(), f2 = cs[2]->result();
        QVERIFY(f1->times.admitted_ms >= f0->times.finished_ms);
        QVERIFY(f2->times.admitted_ms < f0->times.finished_ms);
        for (int i = 0; i < 3; ++i) QCOMPARE(cs[size_t(i)]->tokens(), golden_[size_t(i)].generated);
    }

    // BatchRunner: entry ids as labels, seeds base + index, each entry's stop
    // strings then the run's, max_tokens per entry; never more than
    // max_queue of its requests waiting.
    void batch_runner_ids_seeds_stops() {
        const core::PromptFile pf = core::parse_prompt_text(
            "{\"id\": \"a\", \"prompt\": \"Once upon a time\", \"stop\": [\"Lily\"]}\n"
            "{\"prompt\": \"The cat sat\", \"max_tokens\": 3}\n"
            "{\"id\": 7, \"prompt\": \"Tom had a dog\"}\n"
            "{\"prompt\": \"One day\"}\n");
        QVERIFY(pf.errors.empty());
        core::BatchOptions bo;
        bo.base.max_tokens = 12;
        bo.base.sampling.temperature = 0.9f;
        bo.base.seed = {core::SeedPolicy::BasePlusIndex, 1000, 0};
        bo.base.stop = {"XYZ"};
        bo.concurrency = 2;
        bo.max_queue = 1;
        const core::GenerationRequest r0 = core::BatchRunner::request_for(pf.entries[0], 0, bo);
        QCOMPARE(r0.label, std::string("a"));
        QCOMPARE(r0.stop, (std::vector<std::string>{"Lily", "XYZ"}));
        QCOMPARE(core::resolve_seed(r0.seed), uint64_t{1000});
        const core::GenerationRequest r1 = core::BatchRunner::request_for(pf.entries[1], 1, bo);
        QCOMPARE(r1.label, std::string("line-2"));
        QCOMPARE(r1.max_tokens, 3);
        QCOMPARE(core::resolve_seed(r1.seed), uint64_t{1001});
        QCOMPARE(core::BatchRunner::request_for(pf.entries[2], 2, bo).label, std::string("7"));

        auto s = open_session(2);
        std::mutex mu;
        std::map<size_t, std::shared_ptr<const core::FinishedRequest>> done;
        size_t most_waiting = 0;
        std::unique_ptr<core::BatchRunner> runner;
        runner =
            std::make_unique<core::BatchRunner>(*s, pf.entries, bo, [&](const core::BatchEvent& e) {
                std::lock_guard lock(mu);
                most_waiting = std::max(most_waiting, runner->progress().waiting);
                if (e.type == core::BatchEvent::Type::Finished) done[e.index] = e.result;
            });
        runner->start();
        QVERIFY(QTest::qWaitFor([&] { return runner->done(); }, 120000));
        QVERIFY(s->wait_idle(10s));
        std::lock_guard lock(mu);
        QCOMPARE(done.size(), size_t{4});
        QVERIFY(most_waiting <= 1);
        for (size_t i = 0; i < 4; ++i) {
            QCOMPARE(done[i]->seed, 1000 + i);
            QCOMPARE(done[i]->settings["seed"].get<uint64_t>(), 1000 + i);
            QCOMPARE(done[i]->client_id, std::string("batch"));
        }
        QCOMPARE(done[1]->output_tokens.size(), size_t{3});
        QCOMPARE(done[0]->settings["stop"], nlohmann::json({"Lily", "XYZ"}));
        QCOMPARE(done[0]->output.find("Lily"), std::string::npos);  // cut before the stop
        QCOMPARE(runner->progress().completed, size_t{4});
    }

    // settings_json: numbers as numbers, the typed decimals, n_ctx once.
    void settings_are_numbers() {
        core::GenerationRequest r;
        r.prompt = "x";
        r.sampling.temperature = 0.8f;
        r.sampling.top_p = 0.95f;
        core::EngineFacts f;
        f.n_ctx = 2048;
        f.n_parallel = 4;
        f.kv_type = "f32";
        f.backend = "cpu";
        const nlohmann::json j = core::settings_json(r, 42, f);
        QVERIFY(j["temperature"].is_number_float());
        QCOMPARE(j["temperature"].dump(), std::string("0.8"));
        QCOMPARE(j["top_p"].dump(), std::string("0.95"));
        QVERIFY(j["seed"].is_number_unsigned());
        QCOMPARE(j["seed"].get<uint64_t>(), uint64_t{42});
        QCOMPARE(j["n_ctx"].get<int>(), 2048);
        QVERIFY(!j.contains("n_ctx_slot"));  // the pool: one request may use all of n_ctx
        QVERIFY(j["timeout_ms"].is_null());
        QVERIFY(!j.contains("chat_template"));
    }

    // The session logs every request with a run id itself (its recorder,
    // here the run log's ResponseLogger), whatever submitted it: a plain
    // request, a chat request, a batch (entries cancelled before they were
    // submitted included), with no surface code writing rows. Each appears
    // exactly once, a request without a run id not at all, and a sink that
    // hears Finished finds its row already final.
    void session_logs_every_request_once() {
        const std::string db = dir_.filePath("session-log.sqlite").toStdString();
        auto logger = std::make_shared<core::ResponseLogger>(
            std::make_shared<runlog::RunLog>(runlog::RunLog::open(db)));
        auto s = open_session(2, 128);
        s->set_recorder(logger);
        const int64_t run = logger->begin_run("batch", "session rows", nlohmann::json::object());

        core::GenerationRequest plain = greedy(golden_[0]);
        plain.max_tokens = 4;
        plain.run_id = run;
        plain.label = "plain";
        core::GenerationRequest chat;
        chat.messages = {{"user", "Once upon a time"}};
        chat.chat_template = "chatml";
        chat.max_tokens = 3;
        chat.run_id = run;
        chat.label = "chat";
        core::GenerationRequest unlogged = plain;
        unlogged.run_id = 0;
        unlogged.label = "unlogged";
        std::mutex mu;
        std::map<std::string, std::string> seen_at_finish;  // label -> its row's finish_reason
        auto sink = [&](const core::RequestEvent& e) {
            if (e.type != core::RequestEvent::Type::Finished || !e.result) return;
            const std::string row =
                sql_text(db,
                         "SELECT COUNT(*) || ':' || IFNULL(group_concat(finish_reason), '') FROM "
                         "responses WHERE "
                         "request_id = '" +
                             e.result->label + "'");
            std::lock_guard lock(mu);
            seen_at_finish[e.result->label] = row;
        };
        s->submit(plain, sink);
        s->submit(chat, sink);
        s->submit(unlogged, sink);
        QVERIFY(s->wait_idle(120s));

        // A batch of 6, one at a time, cancelled at once: the entries never
        // submitted are logged too (by the session, finish_unsubmitted).
        std::vector<core::PromptEntry> entries;
        for (int i = 0; i < 6; ++i)
            entries.push_back(
                {size_t(i + 1), "b" + std::to_string(i), golden_[size_t(i)].prompt, 2, {}, {}});
        core::BatchOptions bo;
        bo.base.run_id = run;
        bo.concurrency = 1;
        bo.max_queue = 1;
        std::atomic<int> finished{0};
        core::BatchRunner runner(*s, entries, bo, [&](const core::BatchEvent& e) {
            if (e.type == core::BatchEvent::Type::Finished) ++finished;
        });
        runner.start();
        runner.cancel();
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(finished.load(), 6);
        QCOMPARE(logger->flush(), size_t{0});

        QCOMPARE(sql_text(db, "SELECT COUNT(*) FROM responses"), std::string("8"));
        QCOMPARE(sql_text(db, "SELECT COUNT(DISTINCT request_id) FROM responses"),
                 std::string("8"));
        QCOMPARE(sql_text(db, "SELECT COUNT(*) FROM responses WHERE request_id = 'unlogged'"),
                 std::string("0"));
        QCOMPARE(sql_text(db, "SELECT finish_reason FROM responses WHERE request_id = 'plain'"),
                 std::string("length"));
        QCOMPARE(sql_text(db,
                          "SELECT json_extract(settings, '$.chat_template') FROM responses "
                          "WHERE request_id = 'chat'"),
                 std::string("chatml"));
        const size_t submitted = runner.progress().submitted;
        QVERIFY(submitted >= 1 && submitted < 6);
        QCOMPARE(sql_text(db,
                          "SELECT COUNT(*) FROM responses WHERE request_id LIKE 'b%' AND "
                          "error = 'cancelled before it was submitted'"),
                 std::to_string(6 - submitted));
        QCOMPARE(sql_text(db,
                          "SELECT COUNT(*) FROM responses WHERE finish_reason = "
                          "'interrupted'"),
                 std::string("0"));
        std::lock_guard lock(mu);
        QCOMPARE(seen_at_finish["plain"], std::string("1:length"));
        QCOMPARE(seen_at_finish["chat"].substr(0, 2), std::string("1:"));
        QCOMPARE(seen_at_finish["unlogged"], std::string("0:"));
    }

    // begin_session_run: the run row with its settings, the session's cold
    // start for that run, and the session recording the run's requests
    // (nothing else wires rows).
    void session_run_logs_its_requests() {
        const std::string db = dir_.filePath("session-run.sqlite").toStdString();
        auto logger = std::make_shared<core::ResponseLogger>(
            std::make_shared<runlog::RunLog>(runlog::RunLog::open(db)));
        auto s = open_session(1, 128);
        const core::SessionRun run =
            core::begin_session_run(logger, *s, "generate", "one", {{"max_tokens", 3}});
        QVERIFY(run.run_id > 0);
        QVERIFY2(run.load_warning.empty(), run.load_warning.c_str());
        core::GenerationRequest r = greedy(golden_[2]);
        r.max_tokens = 3;
        r.run_id = run.run_id;
        Collector c;
        // The session sits ready a while before its first request (as the
        // app does while a person types): the load's first token leaves that
        // wait out, so it is exactly ready_ms + the request's TTFT.
        std::this_thread::sleep_for(300ms);
        s->submit(r, c.sink());
        QVERIFY(s->wait_idle(120s));
        QCOMPARE(logger->flush(), size_t{0});
        const std::string id = std::to_string(run.run_id);
        QCOMPARE(sql_text(db,
                          "SELECT kind || ':' || json_extract(settings, '$.max_tokens') FROM "
                          "runs WHERE id = " +
                              id),
                 std::string("generate:3"));
        QCOMPARE(sql_text(db,
                          "SELECT COUNT(*) || ':' || finish_reason FROM responses WHERE "
                          "run_id = " +
                              id),
                 std::string("1:length"));
        QCOMPARE(sql_text(db,
                          "SELECT surface || ':' || (first_token_ms IS NOT NULL) FROM "
                          "model_loads WHERE run_id = " +
                              id),
                 std::string("generate:1"));
        const double gap = std::stod(sql_text(
            db,
            "SELECT first_token_ms - (ready_ms + first_ttft_ms) FROM model_loads WHERE run_id = " +
                id));
        QVERIFY2(std::abs(gap) < 1e-6, std::to_string(gap).c_str());
    }

    // The row builder on real rows: a row per request written when it
    // starts ("interrupted" until it finishes), finished in place; numbers
    // stored as REAL/INTEGER, the real finish reason, TTFT from submit (not
    // less than the queue wait), and the response's settings as its JSON.
    void rows_from_the_builder() {
        const std::string db = dir_.filePath("core.sqlite").toStdString();
        auto log = std::make_shared<runlog::RunLog>(runlog::RunLog::open(db));
        core::ResponseLogger logger(log);
        auto s = open_session(1, 64);
        const int64_t run = logger.begin_run("batch", "rows", nlohmann::json::object());
        std::vector<Collector> cs(3);
        core::GenerationRequest ok = greedy(golden_[0]);
        ok.run_id = run;
        core::GenerationRequest stopped = greedy(golden_[1]);
        stopped.stop = {" "};  // ends at the first space
        stopped.run_id = run;
        core::GenerationRequest too_long;
        for (int i = 0; i < 20; ++i) too_long.prompt += "Once upon a time ";  // > 64 tokens
        too_long.run_id = run;
        s->submit(ok, cs[0].sink());
        s->submit(stopped, cs[1].sink());
        s->submit(too_long, cs[2].sink());
        QVERIFY(s->wait_idle(120s));
        // Started rows first (as a surface writes them from Started events).
        QVERIFY(cs[0].started() && cs[1].started());
        QVERIFY(!cs[2].started());  // refused: never admitted
        QCOMPARE(cs[0].started()->finish_reason, std::string("interrupted"));
        QCOMPARE(cs[0].started()->prompt_tokens, cs[0].result()->prompt_tokens);
        logger.start(*cs[0].started());
        logger.start(*cs[1].started());
        logger.text(*cs[0].started(), "Once", 1, 0.0);
        QCOMPARE(sql_text(db,
                          "SELECT COUNT(*) || '/' || group_concat(output, '') FROM responses "
                          "WHERE finish_reason = 'interrupted' AND finished_ms IS NULL"),
                 std::string("2/Once"));
        for (Collector& c : cs) logger.finish(*c.result());
        QCOMPARE(logger.flush(), size_t{0});
        logger.end_run(run);
        QCOMPARE(sql_text(db, "SELECT kind FROM runs"), std::string("batch"));
        QCOMPARE(sql_text(db, "SELECT COUNT(*) FROM responses"), std::string("3"));
        QCOMPARE(sql_text(db,
                          "SELECT group_concat(finish_reason) FROM (SELECT finish_reason FROM "
                          "responses ORDER BY id)"),
                 std::string("length,stop,error"));
        QCOMPARE(sql_text(db, "SELECT output FROM responses WHERE id = 1"), cs[0].result()->output);
        // TTFT from submit: never below the queue wait, on every row with a token.
        QCOMPARE(sql_text(db,
                          "SELECT COUNT(*) FROM responses WHERE ttft_ms IS NOT NULL AND "
                          "queue_wait_ms IS NOT NULL AND ttft_ms >= queue_wait_ms"),
                 std::string("2"));
        QCOMPARE(sql_text(db,
                          "SELECT typeof(ttft_ms) || typeof(prompt_tokens) FROM responses "
                          "WHERE id = 1"),
                 std::string("realinteger"));
        QCOMPARE(sql_text(db, "SELECT typeof(ttft_ms) FROM responses WHERE id = 3"),
                 std::string("null"));
        QVERIFY(sql_text(db, "SELECT error FROM responses WHERE id = 3").find("longer than") !=
                std::string::npos);
        QCOMPARE(sql_text(db, "SELECT json_type(settings, '$.seed') FROM responses WHERE id = 1"),
                 std::string("integer"));
        QCOMPARE(sql_text(db,
                          "SELECT json_extract(settings, '$.n_ctx') || '/' || "
                          "json_extract(settings, '$.n_parallel') FROM responses WHERE id = 1"),
                 std::string("64/1"));
        QCOMPARE(sql_text(db, "SELECT COUNT(*) FROM environments"), std::string("1"));
        QCOMPARE(sql_text(db, "SELECT backend FROM environments"), std::string("cpu"));
    }
};

QTEST_GUILESS_MAIN(TestCore)
#include "test_core.moc"
