// Scheduler tests on the real stories260K model and its real tokenizer.
//
// Expected tokens come from llama.cpp (tests/data/golden/stories260K_greedy.jsonl,
// greedy, 48 tokens, no stop at EOS), never from the code under test.
// Nothing asserts on timing. Timeouts are made deterministic by stalling the
// engine thread from the event callback (a test-only abuse of the callback:
// the scheduler waits for it, so a sleep there lets a deadline pass for
// sure before the next step), and cancellations are issued from the callback
// at a known event, so they land at a known step.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/greedy_golden.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "scheduler/event_queue.h"
#include "scheduler/scheduler.h"
#include "tokenizer/vocab.h"

using namespace wb;
using namespace wb::scheduler;
using namespace std::chrono_literals;

namespace {

const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

// llama.cpp's greedy records (tests/common/greedy_golden.h).
using Golden = wbtest::GreedyGolden;

/// Golden comparison as the golden README advises: exact, except that a
/// backend whose logits differ from llama.cpp's may take the other branch
/// at a numerical tie (top-2 margin below 0.02); then only the tokens
/// before that step are compared. The CPU reference must match exactly.
bool matches_golden(const std::vector<int32_t>& got, const Golden& g, bool exact, QString* why) {
    if (got == g.generated) return true;
    for (size_t i = 0; i < std::min(got.size(), g.generated.size()); ++i) {
        if (got[i] == g.generated[i]) continue;
        if (!exact && g.margin[i] < 0.02) {
            qInfo("prompt %d: differs at step %zu, a numerical tie (top-2 margin %.4f)", g.id, i,
                  g.margin[i]);
            return true;
        }
        *why = QString("prompt %1: token %2 is %3, llama.cpp has %4")
                   .arg(g.id)
                   .arg(i)
                   .arg(got[i])
                   .arg(g.generated[i]);
        return false;
    }
    *why = QString("prompt %1: %2 tokens, llama.cpp has %3")
               .arg(g.id)
               .arg(got.size())
               .arg(g.generated.size());
    return false;
}

/// The model file's vocab plus a model on `backend` ("" = load_model's default).
struct Engine {
    tokenizer::Vocab vocab;
    std::unique_ptr<model::Model> model;
};

Engine load(uint32_t n_ctx, uint32_t n_seq, const std::string& backend = "") {
    const gguf::File file = gguf::File::open(kModel);
    model::LoadOptions opts;
    if (!backend.empty()) opts.backend = backend;
    opts.context.n_ctx = n_ctx;
    opts.context.n_seq_max = n_seq;
    opts.context.kv_type = model::KvType::F32;
    return Engine{tokenizer::Vocab::from_gguf(file), model::load_model(kModel, opts)};
}

Request golden_request(const Golden& g) {
    Request r;
    r.label = "golden-" + std::to_string(g.id);
    r.prompt = g.prompt;  // tokenized by the scheduler with the model's vocab
    r.max_tokens = 48;
    r.ignore_eos = true;  // the golden run had no stop condition
    r.sampling.temperature = 0.0f;
    return r;
}

/// Collects every event, and lets a test react on the engine thread.
struct Recorder {
    std::mutex mu;
    std::vector<Event> events;
    std::function<void(const Event&)> react;  // runs on the engine thread

    EventCallback sink() {
        return [this](const Event& e) {
            {
                std::lock_guard lock(mu);
                events.push_back(e);
            }
            if (react) react(e);
        };
    }
    std::map<std::string, Event> finished_by_label() {
        std::lock_guard lock(mu);
        std::map<std::string, Event> out;
        for (const Event& e : events) {
            if (e.type == EventType::Finished) out[e.label] = e;
        }
        return out;
    }
    std::vector<Event> of(RequestId id) {
        std::lock_guard lock(mu);
        std::vector<Event> out;
        for (const Event& e : events) {
            if (e.id == id) out.push_back(e);
        }
        return out;
    }
};

/// A real model whose logits turn NaN from the `poison_from`-th decode()
/// call on (0-based): a model that breaks mid-generation.
class PoisonedModel : public model::Model {
  public:
    PoisonedModel(model::Model& inner, int poison_from) : inner_(inner), from_(poison_from) {}
    const model::HParams& hparams() const override { return inner_.hparams(); }
    const model::ContextParams& context() const override { return inner_.context(); }
    std::string backend_name() const override { return inner_.backend_name(); }
    void decode(const model::Batch& batch, std::vector<float>& logits) override {
        inner_.decode(batch, logits);
        if (calls_++ >= from_) std::fill(logits.begin(), logits.end(), NAN);
    }
    void seq_rm(int32_t seq_id) override { inner_.seq_rm(seq_id); }
    uint32_t n_free_cells() const override { return inner_.n_free_cells(); }
    model::MemoryReport memory_report() const override { return inner_.memory_report(); }
    model::DeviceFacts device_facts() const override { return inner_.device_facts(); }
    model::KvCells& kv_cells() override { return inner_.kv_cells(); }
    const model::KvCells& kv_cells() const override { return inner_.kv_cells(); }

  private:
    model::Model& inner_;
    int from_;
    int calls_ = 0;
};

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT

  private:
    std::vector<Golden> golden_;

    // Every golden prompt alone in a one-slot scheduler.
    void alone(const std::string& backend, bool exact) {
        Engine eng = load(512, 1, backend);
        for (const Golden& g : golden_) {
            Recorder rec;
            Scheduler s(*eng.model, eng.vocab, SchedulerParams{1, 4, 32, 64}, rec.sink());
            s.start();
            const SubmitResult r = s.submit(golden_request(g));
            QVERIFY(r.accepted);
            QVERIFY(s.wait_idle(120s));
            const Event fin = rec.finished_by_label().at("golden-" + std::to_string(g.id));
            QCOMPARE(fin.reason, FinishReason::Length);
            QCOMPARE(fin.prompt_tokens, g.prompt_ids);
            QString why;
            QVERIFY2(matches_golden(fin.output_tokens, g, exact, &why), qPrintable(why));
            if (exact) QCOMPARE(fin.output, g.text);
        }
    }

    // The golden prompts among 26 other requests of mixed prompt lengths,
    // output lengths and sampling settings; 8 slots, so requests wait and
    // get admitted at different times; 10 more are submitted while the run
    // goes on; prefill chunks of 16 share ubatches with decode tokens.
    void mixed(const std::string& backend, bool exact) {
        Engine eng = load(8 * 320, 8, backend);
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{8, 64, 16, 48}, rec.sink());

        // Fillers: prompts cut from a story at different lengths.
        const std::string story =
            "Tom had a red kite. He ran to the hill with his dog Max. The wind was strong and "
            "the kite flew high over the trees. Max barked at the birds. Then the string broke "
            "and the kite flew away. Tom was sad, but his mom made him a new kite with blue "
            "paper and a long tail. They flew it together every day after that.";
        std::vector<Request> all;
        for (int i = 0; i < 26; ++i) {
            Request r;
            r.label = "filler-" + std::to_string(i);
            r.prompt = story.substr(0, 4 + static_cast<size_t>(i * 37) % story.size());
            r.max_tokens = 1 + (i * 13) % 60;
            r.ignore_eos = i % 2 == 0;
            if (i % 3 == 0) {
                r.sampling.temperature = 0.8f;
                r.sampling.top_k = 40;
                r.sampling.seed = static_cast<uint64_t>(1000 + i);
            } else {
                r.sampling.temperature = 0.0f;
            }
            all.push_back(r);
        }
        // Interleave the golden requests: positions 0, 5, 11, 17, 23, 29.
        for (size_t k = 0; k < golden_.size(); ++k) {
            all.insert(all.begin() + static_cast<std::ptrdiff_t>(k * 6 - (k > 0 ? 1 : 0)),
                       golden_request(golden_[k]));
        }
        QCOMPARE(all.size(), size_t{32});

        // 22 now, the rest one by one on every 9th token event of the run.
        std::mutex mu;
        size_t next = 22;
        int tokens_seen = 0;
        int refused = 0;  // counted here, checked on the test thread (QVERIFY is not thread-safe)
        for (size_t i = 0; i < next; ++i) QVERIFY(s.submit(all[i]).accepted);
        rec.react = [&](const Event& e) {
            if (e.type != EventType::Token) return;
            std::lock_guard lock(mu);
            if (++tokens_seen % 9 == 0 && next < all.size()) {
                if (!s.submit(all[next++]).accepted) ++refused;
            }
        };
        s.start();
        // Let the run drain: wait until every request was submitted and done.
        for (;;) {
            QVERIFY(s.wait_idle(300s));
            std::lock_guard lock(mu);
            if (next == all.size()) break;
            // Every running request finished before the 9th token of the
            // last stretch: submit the rest directly.
            QVERIFY(s.submit(all[next++]).accepted);
        }
        QVERIFY(s.wait_idle(300s));
        QCOMPARE(refused, 0);
        QVERIFY(tokens_seen > 9 * 10);  // the late requests really came in mid-run

        const auto fin = rec.finished_by_label();
        QCOMPARE(fin.size(), size_t{32});
        for (const Golden& g : golden_) {
            const Event& e = fin.at("golden-" + std::to_string(g.id));
            QCOMPARE(e.reason, FinishReason::Length);
            QString why;
            QVERIFY2(matches_golden(e.output_tokens, g, exact, &why), qPrintable(why));
        }
        // Every request ran: admitted at different times, finished normally.
        std::vector<double> admitted;
        for (const auto& [label, e] : fin) {
            QVERIFY2(e.reason == FinishReason::Length || e.reason == FinishReason::Stop,
                     qPrintable(QString::fromStdString(label + ": " + e.message)));
            admitted.push_back(e.timeline.admitted_ms);
        }
        std::sort(admitted.begin(), admitted.end());
        QVERIFY(admitted.front() < admitted.back());
        const metrics::MetricsSnapshot snap = s.metrics().snapshot(s.now_ms(), 60000);
        QCOMPARE(snap.run.requests_finished, uint64_t{32});
        QCOMPARE(snap.run.ttft_ms.count, size_t{32});
        QVERIFY(snap.run.steps > 0);
        QCOMPARE(snap.running, 0);
        QCOMPARE(snap.kv_cells_used, 0u);  // every slot's sequence was removed
    }

  private slots:
    void initTestCase() {
        golden_ = wbtest::read_greedy_golden();
        QCOMPARE(golden_.size(), size_t{6});
    }

    void golden_alone_cpu() { alone("cpu", true); }
    void golden_alone_default_backend() { alone("", false); }
    // The app's default backend (lavapipe here, the GPU elsewhere).
    void golden_alone_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        alone("vulkan", false);
    }
    void golden_among_31_others_cpu() { mixed("cpu", true); }
    void golden_among_31_others_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        mixed("vulkan", false);
    }

    void queue_full_is_rejected_at_once() {
        Engine eng = load(1024, 2, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 3, 32, 64}, rec.sink());
        // Not started yet: the queue fills deterministically.
        std::vector<SubmitResult> res;
        for (size_t k = 0; k < 3; ++k) res.push_back(s.submit(golden_request(golden_[k])));
        const SubmitResult rej = s.submit(golden_request(golden_[3]));
        QVERIFY(res[0].accepted && res[1].accepted && res[2].accepted);
        QVERIFY(!rej.accepted);
        QCOMPARE(rej.reason, FinishReason::Rejected);
        QVERIFY(rej.message.find("queue full") != std::string::npos);
        s.start();
        QVERIFY(s.wait_idle(120s));
        const auto fin = rec.finished_by_label();
        QCOMPARE(fin.at("golden-3").reason, FinishReason::Rejected);
        QCOMPARE(rec.of(rej.id).size(), size_t{1});  // only its Finished event
        // The refused request counts in the run's totals: 4 finished, 3
        // completed (length), 1 rejected.
        const metrics::MetricsSnapshot snap = s.metrics().snapshot(s.now_ms(), 60000);
        QCOMPARE(snap.run.requests_finished, uint64_t{4});
        QCOMPARE(snap.run.requests_completed, uint64_t{3});
        const std::vector<std::pair<std::string, uint64_t>> reasons = {{"rejected", 1},
                                                                       {"length", 3}};
        QCOMPARE(snap.finish_reasons, reasons);
        for (size_t k = 0; k < 3; ++k) {  // the others finish unchanged
            QString why;
            QVERIFY2(matches_golden(fin.at("golden-" + std::to_string(k)).output_tokens, golden_[k],
                                    true, &why),
                     qPrintable(why));
        }
    }

    // Per-client concurrency: 3 slots, client "batch" limited to 1. Its
    // second request waits while a later "chat" request takes a free slot;
    // it starts only when the first "batch" request has finished.
    void per_client_limit_lets_other_clients_pass() {
        Engine eng = load(3 * 256, 3, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{3, 8, 32, 64}, rec.sink());
        AdmissionLimits lim = s.admission();
        QCOMPARE(lim.max_queue, uint32_t{8});  // from SchedulerParams
        lim.per_client["batch"] = 1;
        s.set_admission(lim);
        Request b1 = golden_request(golden_[0]), b2 = golden_request(golden_[1]);
        Request c1 = golden_request(golden_[2]);
        b1.label = "b1", b2.label = "b2", c1.label = "c1";
        b1.client = b2.client = "batch";
        c1.client = "chat";
        s.submit(b1);
        s.submit(b2);
        s.submit(c1);
        s.start();
        QVERIFY(s.wait_idle(120s));
        std::vector<std::string> order;  // Started and Finished, in delivery order
        {
            std::lock_guard lock(rec.mu);
            for (const Event& e : rec.events) {
                if (e.type == EventType::Started) order.push_back("start " + e.label);
                if (e.type == EventType::Finished) order.push_back("end " + e.label);
            }
        }
        const auto at = [&](const std::string& x) {
            return std::find(order.begin(), order.end(), x) - order.begin();
        };
        QVERIFY(at("start c1") < at("start b2"));  // c1 passed the waiting b2
        QVERIFY(at("end b1") < at("start b2"));    // b2 waited for b1's slot share
        const auto fin = rec.finished_by_label();
        for (const char* l : {"b1", "b2", "c1"}) QCOMPARE(fin.at(l).reason, FinishReason::Length);
        QCOMPARE(fin.at("b2").output_tokens, golden_[1].generated);  // unchanged by the wait
    }

    // max_running raised while a request runs: the waiting ones are admitted
    // at the next step, without a new scheduler and before the running one
    // ends; lowering it again never stops a running request.
    void max_running_changes_while_running() {
        Engine eng = load(3 * 256, 3, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{3, 8, 32, 64}, rec.sink());
        AdmissionLimits lim = s.admission();
        lim.max_running = 1;
        s.set_admission(lim);
        for (size_t k = 0; k < 3; ++k) s.submit(golden_request(golden_[k]));
        size_t started_at_first_token = 0;
        rec.react = [&](const Event& e) {
            // Engine thread, at golden-0's first token (47 more to go).
            if (e.type == EventType::FirstToken && e.label == "golden-0") {
                {
                    std::lock_guard lock(rec.mu);
                    for (const Event& x : rec.events)
                        started_at_first_token += x.type == EventType::Started ? 1 : 0;
                }
                AdmissionLimits more = s.admission();
                more.max_running = 0;  // every slot
                s.set_admission(more);
            }
        };
        s.start();
        QVERIFY(s.wait_idle(120s));
        size_t started_before_end = 0;
        {
            std::lock_guard lock(rec.mu);
            for (const Event& e : rec.events) {
                if (e.type == EventType::Finished && e.label == "golden-0") break;
                if (e.type == EventType::Started) ++started_before_end;
            }
        }
        QCOMPARE(started_at_first_token, size_t{1});  // max_running 1 held the others back
        QCOMPARE(started_before_end, size_t{3});
        const auto fin = rec.finished_by_label();
        for (size_t k = 0; k < 3; ++k)
            QCOMPARE(fin.at("golden-" + std::to_string(k)).output_tokens, golden_[k].generated);
    }

    void queue_wait_timeout_behind_full_slots() {
        Engine eng = load(2 * 512, 2, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 8, 32, 64}, rec.sink());
        Request holder = golden_request(golden_[0]);     // holds slot 0 for 48 tokens
        Request bystander = golden_request(golden_[1]);  // holds slot 1
        Request waiter = golden_request(golden_[2]);
        waiter.label = "waiter";
        waiter.queue_timeout_ms = 5;
        s.submit(holder);
        s.submit(bystander);
        const SubmitResult w = s.submit(waiter);
        // Stall the engine 20 ms at the holder's first token: the waiter's
        // 5 ms deadline has passed before the next step, while both slots
        // still run (48 tokens each).
        rec.react = [&](const Event& e) {
            if (e.type == EventType::FirstToken && e.label == "golden-0") {
                std::this_thread::sleep_for(20ms);
            }
        };
        s.start();
        QVERIFY(s.wait_idle(120s));
        const auto fin = rec.finished_by_label();
        const Event& we = fin.at("waiter");
        QCOMPARE(we.reason, FinishReason::Timeout);
        QVERIFY(we.message.find("queue-wait timeout") != std::string::npos);
        QVERIFY(std::isnan(we.timeline.admitted_ms));  // never got a slot
        QVERIFY(we.output_tokens.empty());
        for (const Event& e : rec.of(w.id)) QVERIFY(e.type != EventType::Started);
        for (size_t k = 0; k < 2; ++k) {
            const Event& e = fin.at("golden-" + std::to_string(k));
            QCOMPARE(e.reason, FinishReason::Length);
            QCOMPARE(e.output_tokens, golden_[k].generated);
        }
        // Timeout 0 always ends in the queue, even with free slots.
        Request zero = golden_request(golden_[3]);
        zero.label = "zero";
        zero.queue_timeout_ms = 0;
        rec.react = nullptr;
        s.submit(zero);
        QVERIFY(s.wait_idle(120s));
        QCOMPARE(rec.finished_by_label().at("zero").reason, FinishReason::Timeout);
    }

    void total_timeout_while_running() {
        Engine eng = load(2 * 512, 2, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 8, 32, 64}, rec.sink());
        Request slow = golden_request(golden_[0]);
        slow.label = "slow";
        slow.timeout_ms = 1000;  // far more than 3 tokens take
        s.submit(slow);
        s.submit(golden_request(golden_[1]));
        // At slow's 3rd token, stall the engine past its deadline.
        rec.react = [&](const Event& e) {
            if (e.type == EventType::Token && e.label == "slow" && e.index == 2) {
                std::this_thread::sleep_for(1100ms);
            }
        };
        s.start();
        QVERIFY(s.wait_idle(120s));
        const auto fin = rec.finished_by_label();
        const Event& e = fin.at("slow");
        QCOMPARE(e.reason, FinishReason::Timeout);
        QVERIFY(e.message.find("total timeout") != std::string::npos);
        // Cut off exactly after its third token, which are llama.cpp's.
        QCOMPARE(e.output_tokens, std::vector<int32_t>(golden_[0].generated.begin(),
                                                       golden_[0].generated.begin() + 3));
        QCOMPARE(fin.at("golden-1").output_tokens, golden_[1].generated);
    }

    void cancel_mid_prefill_and_mid_decode() {
        Engine eng = load(3 * 320, 3, "cpu");
        Recorder rec;
        // Chunks of 8: the 210-token prompt 5 needs 27 steps of prefill.
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{3, 8, 8, 64}, rec.sink());
        Request pre = golden_request(golden_[5]);
        pre.label = "cancel-prefill";
        Request dec = golden_request(golden_[0]);
        dec.label = "cancel-decode";
        const SubmitResult rp = s.submit(pre);
        const SubmitResult rd = s.submit(dec);
        s.submit(golden_request(golden_[2]));  // a bystander
        Request queued = golden_request(golden_[3]);
        queued.label = "cancel-queued";
        const SubmitResult rq = s.submit(queued);  // waits: all 3 slots are taken
        rec.react = [&](const Event& e) {
            // Started arrives after the step that ran the first chunk.
            if (e.type == EventType::Started && e.id == rp.id) {
                s.cancel(rp.id);
                // Still in the queue: cancels are handled before the slot
                // freed by rp's cancel is handed out.
                s.cancel(rq.id);
            }
            if (e.type == EventType::Token && e.id == rd.id && e.index == 4) s.cancel(rd.id);
        };
        s.start();
        QVERIFY(s.wait_idle(120s));
        const auto fin = rec.finished_by_label();

        const Event& p = fin.at("cancel-prefill");
        QCOMPARE(p.reason, FinishReason::Cancelled);
        QVERIFY(p.message.find("prefill") != std::string::npos);
        QCOMPARE(p.prompt_tokens_processed, 8);  // one chunk of 210
        QVERIFY(p.output_tokens.empty());

        const Event& d = fin.at("cancel-decode");
        QCOMPARE(d.reason, FinishReason::Cancelled);
        QVERIFY(d.message.find("decode") != std::string::npos);
        QCOMPARE(d.output_tokens, std::vector<int32_t>(golden_[0].generated.begin(),
                                                       golden_[0].generated.begin() + 5));

        const Event& q = fin.at("cancel-queued");
        QCOMPARE(q.reason, FinishReason::Cancelled);
        QVERIFY(std::isnan(q.timeline.admitted_ms));
        QVERIFY(!s.cancel(rq.id));  // already finished

        QCOMPARE(fin.at("golden-2").output_tokens, golden_[2].generated);
    }

    void invalid_requests_end_alone() {
        Engine eng = load(2 * 64, 2, "cpu");
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 8, 32, 64}, rec.sink());
        s.start();
        Request too_long = golden_request(golden_[5]);  // 210 tokens > 64 per slot
        too_long.label = "too-long";
        Request empty;
        empty.label = "empty";
        Request zero = golden_request(golden_[0]);
        zero.label = "zero-max";
        zero.max_tokens = 0;
        Request bad_id;
        bad_id.label = "bad-id";
        bad_id.prompt_tokens = {1, 512};
        Request ok = golden_request(golden_[0]);
        ok.max_tokens = 10;
        // 10 MB of text: tokenizing it took 614 MB and 11 s only to refuse it.
        Request huge;
        huge.label = "huge";
        huge.prompt = std::string(10000000, 'a');
        for (const Request* r : {&too_long, &empty, &zero, &bad_id, &huge, &ok}) s.submit(*r);
        QVERIFY(s.wait_idle(120s));
        const auto fin = rec.finished_by_label();
        QCOMPARE(fin.at("too-long").reason, FinishReason::Error);
        QVERIFY(fin.at("too-long").message.find("210 tokens") != std::string::npos);
        QCOMPARE(fin.at("empty").reason, FinishReason::Error);
        QVERIFY(fin.at("empty").message.find("empty prompt") != std::string::npos);
        QCOMPARE(fin.at("zero-max").reason, FinishReason::Error);
        QVERIFY(fin.at("zero-max").message.find("max_tokens") != std::string::npos);
        QCOMPARE(fin.at("bad-id").reason, FinishReason::Error);
        QCOMPARE(fin.at("huge").reason, FinishReason::Error);
        QVERIFY2(fin.at("huge").message.find("prompt is 10000000 bytes, so at least") !=
                     std::string::npos,
                 fin.at("huge").message.c_str());
        QVERIFY(fin.at("huge").prompt_tokens.empty());  // refused without tokenizing
        QVERIFY(fin.at("bad-id").message.find("512") != std::string::npos);
        const Event& good = fin.at("golden-0");
        QCOMPARE(good.reason, FinishReason::Length);
        QCOMPARE(good.output_tokens, std::vector<int32_t>(golden_[0].generated.begin(),
                                                          golden_[0].generated.begin() + 10));

        // n_parallel 0: every request is an error, nothing hangs.
        Recorder rec0;
        Scheduler none(*eng.model, eng.vocab, SchedulerParams{0, 8, 32, 64}, rec0.sink());
        none.start();
        const SubmitResult r0 = none.submit(golden_request(golden_[0]));
        QVERIFY(!r0.accepted);
        QVERIFY(r0.message.find("n_parallel is 0") != std::string::npos);
        QVERIFY(none.wait_idle(10s));

        // Settings the model cannot hold are refused when constructing.
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            Scheduler(*eng.model, eng.vocab, SchedulerParams{3, 8, 32, 64}, nullptr));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            Scheduler(*eng.model, eng.vocab, SchedulerParams{2, 8, 32, 1}, nullptr));
    }

    // tests/data/repro/nan_all_output.gguf: output.weight all NaN, so every
    // logit is NaN. The scheduler used to take the engine thread (and the
    // process) down in the sampler; now each request ends with Error naming
    // the step, and the engine goes on serving.
    void nan_logits_end_the_request_naming_the_step() {
        const std::string path = wbtest::data_dir() + "/repro/nan_all_output.gguf";
        const gguf::File file = gguf::File::open(path);
        model::LoadOptions opts;
        opts.backend = "cpu";
        opts.context.n_ctx = 2 * 64;
        opts.context.n_seq_max = 2;
        Engine eng{tokenizer::Vocab::from_gguf(file), model::load_model(path, opts)};
        Recorder rec;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 8, 4, 8}, rec.sink());
        s.start();
        Request greedy = golden_request(golden_[0]);
        greedy.label = "greedy";
        Request chain = golden_request(golden_[1]);
        chain.label = "chain";
        chain.sampling = sampling::SamplingParams{};  // top-k, top-p, min-p, T 0.8
        s.submit(greedy);
        s.submit(chain);
        QVERIFY(s.wait_idle(60s));
        for (const char* label : {"greedy", "chain"}) {
            const Event e = rec.finished_by_label().at(label);
            QCOMPARE(e.reason, FinishReason::Error);
            QVERIFY2(e.message.find("output token 0") != std::string::npos &&
                         e.message.find("prefill") != std::string::npos &&
                         e.message.find("not finite") != std::string::npos,
                     e.message.c_str());
            QVERIFY(e.output_tokens.empty());
        }
        // Still serving: a later request gets its own answer (the same error).
        Request again = golden_request(golden_[2]);
        again.label = "again";
        QVERIFY(s.submit(again).accepted);
        QVERIFY(s.wait_idle(60s));
        QCOMPARE(rec.finished_by_label().at("again").reason, FinishReason::Error);
        QCOMPARE(eng.model->n_free_cells(), 2u * 64u);  // every sequence was removed
    }

    // Logits that turn NaN during decode: the error names the decode step,
    // and the tokens generated before it are kept in the Finished event.
    void nan_logits_mid_decode_name_the_decode_step() {
        Engine eng = load(64, 1, "cpu");
        PoisonedModel poisoned(*eng.model, 4);  // prefill (1 call) + 3 decode steps are fine
        Recorder rec;
        Scheduler s(poisoned, eng.vocab, SchedulerParams{1, 4, 64, 64}, rec.sink());
        s.start();
        s.submit(golden_request(golden_[0]));
        QVERIFY(s.wait_idle(60s));
        const Event e = rec.finished_by_label().at("golden-0");
        QCOMPARE(e.reason, FinishReason::Error);
        QVERIFY2(e.message.find("output token 4 (decode step 4)") != std::string::npos,
                 e.message.c_str());
        QCOMPARE(e.output_tokens, std::vector<int32_t>(golden_[0].generated.begin(),
                                                       golden_[0].generated.begin() + 4));
    }

    void stop_string_and_streamed_pieces() {
        Engine eng = load(512, 1, "cpu");
        EventQueue q;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{1, 4, 32, 64}, q.sink());
        Request r = golden_request(golden_[0]);
        r.stop = {"Lily"};
        s.start();
        s.submit(r);
        QVERIFY(s.wait_idle(60s));
        std::vector<Event> ev;
        q.pop(ev);
        std::string streamed;
        std::vector<EventType> kinds;
        for (const Event& e : ev) {
            kinds.push_back(e.type);
            streamed += e.piece;  // Token pieces, then the Finished tail
        }
        QCOMPARE(kinds.front(), EventType::Queued);
        QCOMPARE(kinds[1], EventType::Started);
        QCOMPARE(kinds[2], EventType::FirstToken);
        QCOMPARE(kinds.back(), EventType::Finished);
        const Event& fin = ev.back();
        QCOMPARE(fin.reason, FinishReason::Stop);
        // llama.cpp's text is ", there was a little girl named Lily. ...":
        // the output ends right before the stop string.
        const std::string expect = golden_[0].text.substr(0, golden_[0].text.find("Lily"));
        QCOMPARE(fin.output, expect);
        QCOMPARE(streamed, expect);
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
