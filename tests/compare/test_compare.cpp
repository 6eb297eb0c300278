// Comparison engine tests. Expected figures come from llama.cpp and from an
// independent float64 forward pass (tests/data/golden/README.md,
// tests/data/golden/quant/README.md), or are worked by hand here; models are
// the real stories260K files run on the CPU reference model with an F32 KV
// cache.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/json_fixtures.h"
#include "compare/compare.h"
#include "compare/compare_jobs.h"
#include "compare/generation.h"
#include "compare/logits_math.h"
#include "compare/testset.h"
#include "compare/text_eval.h"
#include "core/finished_request.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "tokenizer/vocab.h"

namespace {

const std::string kData = wbtest::data_dir();
const std::string kF32 = kData + "/models/stories260K.gguf";
const std::string kQ8 = kData + "/golden/quant/stories260K-q8_0.gguf";
const std::string kQ4 = kData + "/golden/quant/stories260K-q4_0.gguf";
const std::string kF16 = kData + "/golden/quant/stories260K-f16.gguf";
const std::string kText = kData + "/golden/stories260K_ppl_text.txt";

using wbtest::ids;
using wbtest::read_json;
using wbtest::read_jsonl;

std::unique_ptr<wb::model::Model> load_cpu(const std::string& path,
                                           const wb::model::ContextParams& cp) {
    wb::model::LoadOptions o;
    o.backend = "cpu-ref";  // the f32 reference: the expectations are float64 sums
    o.context = cp;
    return wb::model::load_model(path, o);
}

std::unique_ptr<wb::model::Model> load_cpu_ctx(const std::string& path, uint32_t n_ctx) {
    wb::model::ContextParams cp;
    cp.n_ctx = n_ctx;
    cp.kv_type = wb::model::KvType::F32;
    return load_cpu(path, cp);
}

std::vector<int32_t> text_tokens() {
    const auto f = wb::gguf::File::open(kF32);
    const auto vocab = wb::tokenizer::Vocab::from_gguf(f);
    QFile in(QString::fromStdString(kText));
    if (!in.open(QIODevice::ReadOnly)) qFatal("cannot open %s", kText.c_str());
    const std::string text = in.readAll().toStdString();
    return vocab.tokenize(text, true);
}

void write_file(const QString& path, const std::string& text) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out << text;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

class TestCompare : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    // --- the math, worked by hand ----------------------------------------

    // A compare row ends when it was logged, never a millisecond after:
    // its submit time is the log time less the e2e time rounded as
    // finished_utc_ms() rounds it (truncating put the end up to 1 ms past
    // the log time, after the run's ended_ms). Hand-worked: 1000 - 6.
    void compare_rows_end_when_logged() {
        QCOMPARE(wb::compare::submitted_utc_ms(1000, 5.7), int64_t(994));
        for (const double e2e : {0.0, 0.4, 0.5, 5.7, 123.49, 123.5, 9999.9}) {
            wb::core::FinishedRequest f;
            f.times.submitted_ms = 0.0;
            f.times.finished_ms = e2e;
            f.submitted_utc_ms = wb::compare::submitted_utc_ms(1000, e2e);
            QCOMPARE(f.finished_utc_ms().value_or(-1), int64_t(1000));
        }
    }

    // The speed figure of a model's timed passes: median (numpy's
    // percentile 50: the middle sample, or the mean of the two middle ones)
    // and the range, worked by hand; the samples stay in run order.
    void speed_figure_by_hand() {
        const auto odd = wb::compare::speed_figure({5.0, 1.0, 4.0, 2.0, 3.0});
        QCOMPARE(odd.median, 3.0);
        QCOMPARE(odd.min, 1.0);
        QCOMPARE(odd.max, 5.0);
        QCOMPARE(odd.samples, (std::vector<double>{5.0, 1.0, 4.0, 2.0, 3.0}));
        const auto even = wb::compare::speed_figure({41.7, 290.0, 287.5, 295.25});
        QCOMPARE(even.median, (287.5 + 290.0) / 2);  // 288.75: the cold 41.7 does not pull it
        QCOMPARE(even.min, 41.7);
        QCOMPARE(even.max, 295.25);
        const auto one = wb::compare::speed_figure({6.33});
        QCOMPARE(one.median, 6.33);
        QCOMPARE(one.min, 6.33);
        QCOMPARE(one.max, 6.33);
        const auto none = wb::compare::speed_figure({});
        QVERIFY(none.samples.empty());
        QCOMPARE(none.median, 0.0);
        const std::string how = wb::compare::speed_method(5);
        QVERIFY2(contains(how, "median (min-max) of 5 timed passes after 1 untimed warm-up pass") &&
                     contains(how, "one request at a time") && contains(how, "alone"),
                 how.c_str());
    }

    // Speed as llama-bench measures it: per model, one untimed warm-up pass
    // over the prompts, then N timed passes, one run at a time; the figures
    // come from the timed passes only (one sample each, worked out here
    // from the recorded run times), and the outputs from the first timed
    // pass. A model against itself (the compare -m M -m M).
    void speed_warmup_then_timed_passes() {
        wb::compare::CompareOptions o;
        o.kv_type = wb::model::KvType::F32;
        o.models = {kF32, kF32};
        o.prompts = {"Once upon a time", "Lily and Ben"};
        o.n_predict = 8;
        o.repetitions = 4;
        std::vector<std::string> progress;
        const auto rep = wb::compare::run_compare(
            o, load_cpu, [&](const std::string& s) { progress.push_back(s); });
        QCOMPARE(rep.repetitions, 4u);
        for (const auto& m : rep.models) {
            QCOMPARE(m.warmup_runs.size(), size_t(2));  // 1 pass x 2 prompts
            QCOMPARE(m.timed_runs.size(), size_t(4));
            for (size_t p = 0; p < 2; ++p) {
                // The warm-up is the same work: the same greedy tokens.
                QCOMPARE(m.warmup_runs[p].tokens.size(), size_t(8));
                for (const auto& pass : m.timed_runs) {
                    QCOMPARE(pass.size(), size_t(2));
                    QCOMPARE(pass[p].tokens, m.warmup_runs[p].tokens);
                }
                // Outputs and log rows: the first timed pass, not the warm-up.
                QCOMPARE(m.runs[p].tokens, m.timed_runs[0][p].tokens);
                QCOMPARE(m.runs[p].ttft_ms, m.timed_runs[0][p].ttft_ms);
                QCOMPARE(m.runs[p].e2e_ms, m.timed_runs[0][p].e2e_ms);
            }
            // One sample per timed pass, by the definitions: decode = the
            // pass's 2 x 7 tokens after the first / its decode time;
            // prefill = its prompt tokens / its prefill time; TTFT and e2e =
            // the mean of its 2 runs.
            std::vector<double> decode, prefill, ttft, e2e;
            for (const auto& pass : m.timed_runs) {
                const auto& x = pass[0];
                const auto& y = pass[1];
                decode.push_back(14 * 1000.0 / ((x.e2e_ms - x.ttft_ms) + (y.e2e_ms - y.ttft_ms)));
                prefill.push_back((x.n_prompt + y.n_prompt) * 1000.0 /
                                  (x.prefill_ms + y.prefill_ms));
                ttft.push_back((x.ttft_ms + y.ttft_ms) / 2);
                e2e.push_back((x.e2e_ms + y.e2e_ms) / 2);
            }
            auto same = [](const std::vector<double>& got, const std::vector<double>& want) {
                if (got.size() != want.size()) return false;
                for (size_t k = 0; k < got.size(); ++k)
                    if (std::abs(got[k] - want[k]) > 1e-9 * std::abs(want[k])) return false;
                return true;
            };
            QVERIFY(same(m.decode_tps.samples, decode));
            QVERIFY(same(m.prefill_tps.samples, prefill));
            QVERIFY(same(m.ttft_ms.samples, ttft));
            QVERIFY(same(m.e2e_ms.samples, e2e));
            // Median of 4: the mean of the middle two; the range.
            std::vector<double> sorted = decode;
            std::sort(sorted.begin(), sorted.end());
            QVERIFY(std::abs(m.decode_tps.median - (sorted[1] + sorted[2]) / 2) <=
                    1e-9 * sorted[2]);
            QVERIFY(std::abs(m.decode_tps.min - sorted[0]) <= 1e-9 * sorted[0]);
            QVERIFY(std::abs(m.decode_tps.max - sorted[3]) <= 1e-9 * sorted[3]);
        }
        // One at a time: both warm-ups first, then the timed passes in turn
        // (pass 1 of A, of B, pass 2 of A, ...); every prompt run is
        // announced (the Compare tab's Cancel point): 2 models x (1 + 4)
        // passes x 2 prompts, in this order.
        std::vector<std::string> want;
        for (const char* m : {"A", "B"})
            for (int k = 0; k < 2; ++k)
                want.push_back(std::string("speed ") + m + " (warm-up, not timed)");
        for (int pass = 1; pass <= 4; ++pass)
            for (const char* m : {"A", "B"})
                for (int k = 0; k < 2; ++k)
                    want.push_back(std::string("speed ") + m + " (timed pass " +
                                   std::to_string(pass) + "/4)");
        std::vector<std::string> got, counts;
        for (const std::string& s : progress) {
            if (s.rfind("speed ", 0) != 0) continue;
            got.push_back(s.substr(0, s.find(':')));
            counts.push_back(s.substr(s.find(':') + 2));
        }
        QCOMPARE(got, want);
        QCOMPARE(counts.front(), std::string("run 1/20"));
        QCOMPARE(counts.back(), std::string("run 20/20"));

        // The table: one figure per model and speed row, median (min-max),
        // and how it was measured; no p50/p95 from cold single runs.
        const std::string table = wb::compare::format_table(rep);
        qInfo("\n%s", table.c_str());
        char cell[96];
        const auto& d = rep.models[1].decode_tps;
        std::snprintf(cell, sizeof cell, "%.1f (%.1f-%.1f)", d.median, d.min, d.max);
        QVERIFY2(contains(table, cell), cell);
        QVERIFY(
            contains(table, "Speed: median (min-max) of 4 timed passes after 1 untimed warm-up"));
        QVERIFY(!contains(table, "p50"));
        const auto j = wb::compare::to_json(rep);
        QCOMPARE(j["repetitions"].get<int>(), 4);
        QCOMPARE(j["warmup_passes"].get<int>(), 1);
        QCOMPARE(j["models"][1]["decode_tokens_per_s"]["samples"].size(), size_t(4));
        QCOMPARE(j["models"][1]["warmup_runs"].size(), size_t(2));
        QCOMPARE(j["models"][1]["timed_runs"].size(), size_t(4));

        // No timed pass at all is refused before anything loads.
        int loads = 0;
        o.repetitions = 0;
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            wb::compare::run_compare(o,
                                     [&](const std::string& p, const wb::model::ContextParams& cp) {
                                         ++loads;
                                         return load_cpu(p, cp);
                                     }));
        QCOMPARE(loads, 0);
    }

    void log_softmax_nll_kld_by_hand() {
        // logits [0, ln 3] -> p = [1/4, 3/4]; logits [0, 0] -> q = [1/2, 1/2].
        const std::vector<float> a{0.0f, static_cast<float>(std::log(3.0))};
        const std::vector<float> b{5.0f, 5.0f};  // shift-invariant: same as [0, 0]
        std::vector<double> lp, lq;
        wb::compare::log_softmax(a, lp);
        wb::compare::log_softmax(b, lq);
        QVERIFY(std::abs(std::exp(lp[0]) - 0.25) < 1e-7);
        QVERIFY(std::abs(std::exp(lq[1]) - 0.5) < 1e-15);
        // KL(P||Q) = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.1308121...
        const double want = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
        QVERIFY(std::abs(wb::compare::kl_divergence(lp, lq) - want) < 1e-7);
        QCOMPARE(wb::compare::kl_divergence(lp, lp), 0.0);
        QVERIFY(wb::compare::kl_divergence(lq, lp) > 0.0);
        QVERIFY(std::abs(wb::compare::nll(b, 1) - std::log(2.0)) < 1e-15);
        // Large logits do not overflow.
        const std::vector<float> big{1000.0f, 1000.0f, -1000.0f};
        QVERIFY(std::abs(wb::compare::nll(big, 0) - std::log(2.0)) < 1e-12);
        QCOMPARE(wb::compare::argmax(std::vector<float>{1.0f, 3.0f, 3.0f, 2.0f}), 1);
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, wb::compare::nll(b, 2));
    }

    void agreement_by_hand() {
        const std::vector<int32_t> a{1, 2, 3, 4}, b{1, 2, 9, 4};
        const auto t = wb::compare::token_agreement(a, b);
        QCOMPARE(t.equal, uint64_t(3));
        QCOMPARE(t.share(), 0.75);
        QCOMPARE(*wb::compare::first_divergence(a, b), size_t(2));
        QVERIFY(!wb::compare::first_divergence(a, a));
    }

    // --- test sets and prompt files --------------------------------------

    void testset_parsing_and_errors() {
        const QString p = dir_.filePath("set.jsonl");
        write_file(
            p,
            "# comment\n"
            "{\"prompt\": \"Hi\", \"answer\": \"there\"}\n"
            "\n"
            "{\"id\": \"x\", \"prompt\": \"Q\", \"expected\": \" 42 \", \"match\": \"exact\", "
            "\"max_tokens\": 5}\n");
        const auto items = wb::compare::load_testset(p.toStdString(), 16);
        QCOMPARE(items.size(), size_t(2));
        QCOMPARE(items[0].id, std::string("line 2"));
        QCOMPARE(items[0].max_tokens, 16u);
        QCOMPARE(items[1].id, std::string("x"));
        QCOMPARE(items[1].line, size_t(4));
        QCOMPARE(items[1].max_tokens, 5u);
        QVERIFY(wb::compare::answer_matches(" over there!", items[0]));
        QVERIFY(!wb::compare::answer_matches(" There", items[0]));
        QVERIFY(wb::compare::answer_matches("\n42\n", items[1]));
        QVERIFY(!wb::compare::answer_matches("42.", items[1]));

        auto error_of = [&](const std::string& content) -> std::string {
            const QString q = dir_.filePath("bad.jsonl");
            write_file(q, content);
            try {
                wb::compare::load_testset(q.toStdString());
            } catch (const wb::compare::TestSetError& e) {
                return e.what();
            }
            return "no error";
        };
        QVERIFY(contains(error_of(""), "test set has no items"));
        QVERIFY(contains(error_of("\n# only a comment\n"), "has no items"));
        const std::string no_answer =
            error_of("{\"prompt\": \"a\", \"answer\": \"b\"}\n{\"prompt\": \"c\"}\n");
        QVERIFY2(contains(no_answer, "bad.jsonl:2:") && contains(no_answer, "no \"answer\""),
                 no_answer.c_str());
        QVERIFY(contains(error_of("{\"prompt\": \"a\", \"answer\": \"  \"}"), "empty \"answer\""));
        QVERIFY(contains(error_of("{\"prompt\": \"a\""), "bad.jsonl:1: invalid JSON"));
        QVERIFY(contains(error_of("[1, 2]"), "expected a JSON object"));
        QVERIFY(contains(error_of("{\"answer\": \"a\"}"), "no \"prompt\""));
        QVERIFY(contains(error_of("{\"prompt\": \"a\", \"answer\": \"b\", \"match\": \"regex\"}"),
                         "\"match\" must be"));
        QVERIFY_THROWS_EXCEPTION(
            wb::compare::TestSetError,
            wb::compare::load_testset(dir_.filePath("missing.jsonl").toStdString()));
        // Found by fuzzing: a number too large for a double makes nlohmann
        // throw out_of_range, not parse_error; it escaped both readers
        // without the file and line.
        const std::string overflow =
            error_of("{\"prompt\": \"a\", \"answer\": \"b\"}\n{\"prompt\": 1e999}\n");
        QVERIFY2(contains(overflow, "bad.jsonl:2: invalid JSON"), overflow.c_str());
        try {
            write_file(dir_.filePath("overflow.txt"), "Once\n{\"prompt\": \"a\", \"n\": -1e999}\n");
            wb::compare::load_prompts(dir_.filePath("overflow.txt").toStdString());
            QFAIL("a number overflow should be a TestSetError");
        } catch (const wb::compare::TestSetError& e) {
            QVERIFY2(contains(e.what(), "overflow.txt:2: invalid JSON"), e.what());
        }

        const QString pp = dir_.filePath("prompts.txt");
        write_file(pp, "Once upon a time\r\n\n{\"prompt\": \"Lily\"}\n");
        QCOMPARE(wb::compare::load_prompts(pp.toStdString()),
                 (std::vector<std::string>{"Once upon a time", "Lily"}));
    }

    // --- perplexity by llama.cpp's rule ----------------------------------

    // A variant whose logits are all NaN (tests/data/repro/nan_all_output.gguf):
    // its KLD and PPL are NaN, never 0 (0 would read "identical to A").
    void nan_logits_give_nan_kld_and_ppl_never_zero() {
        std::vector<double> lp(4, std::log(0.25)), lq(4, NAN);
        QVERIFY(std::isnan(wb::compare::kl_divergence(lp, lq)));
        QVERIFY(std::isnan(wb::compare::kl_divergence(lq, lp)));

        auto a = load_cpu_ctx(kF32, 128);
        auto b = load_cpu_ctx(kData + "/repro/nan_all_output.gguf", 128);
        std::vector<wb::compare::TextModel> tms(2);
        tms[0].model = a.get();
        tms[1].model = b.get();
        tms[0].tokens = tms[1].tokens = text_tokens();
        tms[0].tokens.resize(256);  // two chunks are enough
        tms[1].tokens.resize(256);
        tms[0].kld_with_reference = tms[1].kld_with_reference = true;
        const auto res = wb::compare::evaluate_text(tms, 128);
        QVERIFY(std::isfinite(res.ppl[0].ppl));
        QCOMPARE(res.kld[0]->mean, 0.0);  // A against itself
        QVERIFY(std::isnan(res.ppl[1].ppl));
        const wb::compare::KldResult& k = *res.kld[1];
        for (double v : {k.mean, k.mean_error, k.median, k.p99, k.max, k.min})
            QVERIFY(std::isnan(v));
    }

    void perplexity_f32_matches_llama_cpp() {
        const QJsonObject g = read_json(kData + "/golden/stories260K_ppl_result.json");
        auto m = load_cpu_ctx(kF32, 128);
        std::vector<wb::compare::TextModel> tms(1);
        tms[0].model = m.get();
        tms[0].tokens = text_tokens();
        const auto res = wb::compare::evaluate_text(tms, 128);
        const auto& p = res.ppl[0];
        QCOMPARE(p.n_chunks, uint32_t(g["n_chunks"].toInt()));
        QCOMPARE(p.n_scored, uint64_t(14 * 63));
        const double want = g["ppl"].toDouble();
        qInfo("PPL %.6f (llama.cpp %.4f, rel diff %.2e), ± %.5f (llama.cpp %.5f)", p.ppl, want,
              p.ppl / want - 1, p.ppl_error, g["ppl_error_estimate"].toDouble());
        QVERIFY(std::abs(p.ppl / want - 1) < 1e-3);
        QVERIFY(std::abs(p.ppl_error / g["ppl_error_estimate"].toDouble() - 1) < 1e-2);
        const QJsonArray running = g["running_ppl_after_each_chunk"].toArray();
        for (int c = 0; c < running.size(); ++c) {
            QVERIFY2(std::abs(p.running_ppl[size_t(c)] / running[c].toDouble() - 1) < 1e-3,
                     qPrintable(QString("chunk %1").arg(c + 1)));
        }
        // Too short: one token fewer than 2 windows' worth.
        tms[0].tokens.resize(255);
        try {
            wb::compare::evaluate_text(tms, 128);
            QFAIL("short text accepted");
        } catch (const wb::compare::TextTooShort& e) {
            QVERIFY2(contains(e.what(), "255 tokens") && contains(e.what(), "256"), e.what());
        }
    }

    // --- first-step logits of the variant files --------------------------

    void variant_first_logits_match_f64_dequant_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<int>("prompt");
        for (const char* v : {"f16", "q8_0", "q4_0"}) {
            for (int id : {0, 5})
                QTest::newRow(qPrintable(QString("%1/%2").arg(v).arg(id))) << v << id;
        }
    }
    void variant_first_logits_match_f64_dequant() {
        QFETCH(QString, variant);
        QFETCH(int, prompt);
        const std::string base = kData + "/golden/quant/stories260K-" + variant.toStdString();
        const QJsonObject g = read_json(base + "_first_logits_" + std::to_string(prompt) + ".json");
        auto m = load_cpu_ctx(base + ".gguf", 256);
        const std::vector<int32_t> toks = ids(g["prompt_token_ids"]);
        wb::model::Batch b;
        for (size_t i = 0; i < toks.size(); ++i) {
            b.add(toks[i], int32_t(i), 0, i + 1 == toks.size());
        }
        std::vector<float> logits;
        m->decode(b, logits);
        const QJsonArray want = g["logits_f64_dequant"].toArray();
        QCOMPARE(logits.size(), size_t(want.size()));
        double worst = 0;
        for (int i = 0; i < want.size(); ++i) {
            worst = std::max(worst, std::abs(double(logits[size_t(i)]) - want[i].toDouble()));
        }
        qInfo("max |logit - f64_dequant| = %.2e", worst);
        QVERIFY(worst < 1e-3);
    }

    // --- the whole comparison: F32 vs itself, Q8_0 and Q4_0 --------------

    void compare_f32_q8_q4() {
        const auto golden = read_jsonl(kData + "/golden/stories260K_greedy.jsonl");
        wb::compare::CompareOptions o;
        o.kv_type = wb::model::KvType::F32;  // as load_cpu_ctx loads them
        o.models = {kF32, kF32, kQ8, kQ4};
        o.text_file = kText;
        o.ppl_ctx = 128;
        o.n_predict = 48;
        for (const QJsonObject& r : golden)
            o.prompts.push_back(r["prompt"].toString().toStdString());
        // Test set: the F32 model's golden continuations (llama.cpp) as answers.
        const QString set = dir_.filePath("stories.jsonl");
        {
            nlohmann::json lines = nlohmann::json::array();
            std::string text;
            for (const QJsonObject& r : golden) {
                const std::string gen = r["generated_text"].toString().toStdString();
                nlohmann::json item{{"prompt", r["prompt"].toString().toStdString()},
                                    {"answer", gen.substr(0, 24)},
                                    {"max_tokens", 48}};
                text += item.dump() + "\n";
            }
            text +=
                nlohmann::json{
                    {"id", "never"}, {"prompt", "Once upon a time"}, {"answer", "zebra spaceship"}}
                    .dump() +
                "\n";
            write_file(set, text);
        }
        o.testset_file = set.toStdString();
        std::vector<std::string> progress;
        const auto rep = wb::compare::run_compare(
            o, load_cpu, [&](const std::string& s) { progress.push_back(s); });
        QVERIFY(!progress.empty());
        QCOMPARE(rep.models.size(), size_t(4));
        const auto& a = rep.models[0];
        const auto& self = rep.models[1];
        const auto& q8 = rep.models[2];
        const auto& q4 = rep.models[3];

        // Greedy A equals llama.cpp's tokens.
        for (size_t p = 0; p < golden.size(); ++p) {
            QCOMPARE(a.runs[p].tokens, ids(golden[p]["generated_token_ids"]));
        }
        // F32 against itself: exactly 0 and 100%.
        QVERIFY(self.kld);
        QCOMPARE(self.kld->mean, 0.0);
        QCOMPARE(self.kld->max, 0.0);
        QCOMPARE(self.kld->same_top, self.kld->n);
        QCOMPARE(self.teacher_forced->equal, self.teacher_forced->total);
        for (const auto& d : self.divergence) QVERIFY(!d);
        QCOMPARE(self.ppl->ppl, a.ppl->ppl);

        // Perplexity of each variant within 0.1% of the independent float64
        // figures with exact activations and an F32 KV cache.
        const QJsonObject f64 =
            read_json(kData +
                      "/golden/quant/stories260K_quant_ppl_kld.json")["independent_float64_ppl"]
                .toObject();
        const double want_a = f64["f32"].toObject()["exact_f32kv"].toDouble();
        const double want_q8 = f64["q8_0"].toObject()["exact_f32kv"].toDouble();
        const double want_q4 = f64["q4_0"].toObject()["exact_f32kv"].toDouble();
        qInfo("PPL A %.6f (%.6f)  Q8_0 %.6f (%.6f)  Q4_0 %.6f (%.6f)", a.ppl->ppl, want_a,
              q8.ppl->ppl, want_q8, q4.ppl->ppl, want_q4);
        QVERIFY(std::abs(a.ppl->ppl / want_a - 1) < 1e-3);
        QVERIFY(std::abs(q8.ppl->ppl / want_q8 - 1) < 1e-3);
        QVERIFY(std::abs(q4.ppl->ppl / want_q4 - 1) < 1e-3);

        // KLD: Q8_0 below Q4_0, never negative. llama.cpp's figures include
        // its run-time Q8_0 activation rounding (README: most of the Q8_0
        // effect); with exact activations Q8_0 must be no larger than
        // llama.cpp's 0.000828, and Q4_0 (dominated by the weights) within a
        // factor 2 of its 0.109778.
        qInfo(
            "KLD Q8_0 mean %.6f p99 %.6f max %.6f top1 %.4f | Q4_0 mean %.6f p99 %.6f max %.6f "
            "top1 %.4f",
            q8.kld->mean, q8.kld->p99, q8.kld->max, q8.kld->same_top_share(), q4.kld->mean,
            q4.kld->p99, q4.kld->max, q4.kld->same_top_share());
        QCOMPARE(q8.kld->n, uint64_t(882));
        QVERIFY(q8.kld->min >= 0.0 && q4.kld->min >= 0.0);
        QVERIFY(q8.kld->mean > 0.0);
        QVERIFY(q8.kld->mean < q4.kld->mean);
        QVERIFY(q8.kld->mean < 0.000828);
        QVERIFY(q4.kld->mean > 0.109778 / 2 && q4.kld->mean < 0.109778 * 2);
        QVERIFY(q8.kld->same_top_share() > q4.kld->same_top_share());
        QVERIFY(q8.kld->same_top_share() >= 0.98);  // llama.cpp: 98.07% with rounded activations
        QVERIFY(q4.kld->same_top_share() > 0.70 && q4.kld->same_top_share() < 0.95);  // 81.7%

        // Free-running split steps equal those of the float64 pass's greedy
        // tokens on each file (golden generated_token_ids_f64_dequant).
        const std::vector<std::pair<const wb::compare::ModelReport*, std::string>> variants{
            {&q8, "q8_0"}, {&q4, "q4_0"}};
        for (const auto& [m, file] : variants) {
            const auto recs =
                read_jsonl(kData + "/golden/quant/stories260K-" + file + "_greedy.jsonl");
            for (size_t p = 0; p < recs.size(); ++p) {
                const auto want =
                    wb::compare::first_divergence(ids(golden[p]["generated_token_ids"]),
                                                  ids(recs[p]["generated_token_ids_f64_dequant"]));
                QCOMPARE(m->divergence[p], want);
                QCOMPARE(m->runs[p].tokens, ids(recs[p]["generated_token_ids_f64_dequant"]));
            }
            // Teacher forcing never agrees less than the free-running prefix.
            uint64_t prefix = 0;
            for (const auto& d : m->divergence) prefix += d ? *d : 48;
            QVERIFY(m->teacher_forced->equal >= prefix);
        }

        // Test set: A answers its own llama.cpp continuations, never the zebra.
        QCOMPARE(rep.test_items.size(), size_t(7));
        QCOMPARE(a.test_correct_count, size_t(6));
        QVERIFY(!a.test_correct[6]);
        for (size_t k = 0; k < rep.test_items.size(); ++k) {
            bool differs = false;
            for (const auto& m : rep.models) differs |= m.test_correct[k] != a.test_correct[k];
            QCOMPARE(std::count(rep.differing_items.begin(), rep.differing_items.end(), k) == 1,
                     differs);
        }
        // Q4_0 splits at step 0 on prompt 1, so it cannot give that answer.
        QVERIFY(!q4.test_correct[1]);

        // Speed figures exist for every model and the table names them.
        for (const auto& m : rep.models) {
            QVERIFY(m.load_ms > 0 && m.decode_tps.median > 0 && m.prefill_tps.median > 0);
            QCOMPARE(m.ttft_ms.samples.size(), size_t(o.repetitions));
            QVERIFY(m.ttft_ms.median <= m.e2e_ms.median);
        }
        const std::string table = wb::compare::format_table(rep);
        qInfo("\n%s", table.c_str());
        QVERIFY(contains(table, "KLD vs A mean"));
        QVERIFY(contains(table, "n_ctx 128, 14 chunks, 882 tokens"));
        const auto j = wb::compare::to_json(rep);
        const int n_kld = j["models"][2]["kld"]["n"];
        QCOMPARE(n_kld, 882);
    }

    void different_vocabularies_are_reported() {
        wb::compare::CompareOptions o;
        o.kv_type = wb::model::KvType::F32;  // as load_cpu_ctx loads them
        o.models = {kF32, kData + "/models/llama-2-tiny-random.gguf"};
        o.prompts = {"Once upon a time"};
        o.n_predict = 4;
        o.text_file = kText;
        o.ppl_ctx = 64;
        const auto rep = wb::compare::run_compare(o, load_cpu);
        QCOMPARE(rep.notes.size(), size_t(1));
        QVERIFY2(contains(rep.notes[0], "different vocabulary") &&
                     contains(rep.notes[0], "32000 vs 512"),
                 rep.notes[0].c_str());
        const auto& b = rep.models[1];
        QVERIFY(!b.same_vocab);
        QVERIFY(!b.kld && !b.teacher_forced);
        QVERIFY(b.ppl && b.ppl->ppl > 0);  // still scored, with its own tokens
        QCOMPARE(b.runs[0].tokens.size(), size_t(4));
        QVERIFY(contains(wb::compare::format_table(rep), "n/a (vocab)"));
    }

    // Models the caller loaded (the Compare tab's streamed panes): no load
    // at all, the same greedy tokens as llama.cpp / the float64 pass even
    // when sequence 0 holds leftovers, and sequence 0 empty afterwards.
    void compare_on_loaded_models() {
        const auto golden = read_jsonl(kData + "/golden/stories260K_greedy.jsonl");
        const auto golden4 = read_jsonl(kData + "/golden/quant/stories260K-q4_0_greedy.jsonl");
        const uint32_t n_predict = 16;
        wb::compare::CompareOptions o;
        o.kv_type = wb::model::KvType::F32;  // as load_cpu_ctx loads them
        o.models = {kF32, kQ4};
        o.n_predict = n_predict;
        for (size_t p = 0; p < 2; ++p)
            o.prompts.push_back(golden[p]["prompt"].toString().toStdString());
        auto a = load_cpu_ctx(kF32, 64);
        auto b = load_cpu_ctx(kQ4, 64);
        // Leftovers of an earlier run in sequence 0 (a reply that was
        // streamed, a cancelled one): the comparison must not see them.
        for (wb::model::Model* m : {a.get(), b.get()}) {
            wb::model::Batch batch;  // 3 tokens of sequence 0
            for (int32_t i = 0; i < 3; ++i) batch.add(300 + i, i, 0, i == 2);
            std::vector<float> logits;  // [1, n_vocab]
            m->decode(batch, logits);
            QCOMPARE(m->n_free_cells(), 48u);  // the 3 tokens hold one block of 16 cells
        }
        const std::vector<wb::compare::LoadedModel> loaded{{a.get(), 12.5}, {b.get(), 7.25}};
        const auto rep = wb::compare::run_compare(o, loaded);
        QCOMPARE(rep.models.size(), size_t(2));
        for (size_t p = 0; p < 2; ++p) {
            auto want_a = ids(golden[p]["generated_token_ids"]);
            auto want_b = ids(golden4[p]["generated_token_ids_f64_dequant"]);
            want_a.resize(n_predict);
            want_b.resize(n_predict);
            QCOMPARE(rep.models[0].runs[p].tokens, want_a);
            QCOMPARE(rep.models[1].runs[p].tokens, want_b);
        }
        QCOMPARE(rep.models[0].load_ms, 12.5);  // the caller's figure, nothing reloaded
        QCOMPARE(rep.models[1].load_ms, 7.25);
        QCOMPARE(rep.models[1].n_ctx, 64u);                       // the model's own context
        QCOMPARE(rep.models[1].backend, std::string("cpu-ref"));  // the f32 reference, named so
        QVERIFY(rep.models[1].teacher_forced && rep.models[1].teacher_forced->total == 32);
        QCOMPARE(a->n_free_cells(), 64u);
        QCOMPARE(b->n_free_cells(), 64u);

        // Wrong lending fails before any decoding, naming the model.
        auto fails = [&](const wb::compare::CompareOptions& opts,
                         const std::vector<wb::compare::LoadedModel>& ms, const std::string& part) {
            try {
                wb::compare::run_compare(opts, ms);
            } catch (const std::invalid_argument& e) {
                if (contains(e.what(), part)) return true;
                qWarning("message: %s", e.what());
            }
            return false;
        };
        QVERIFY(fails(o, {loaded[0]}, "1 loaded models for 2 model paths"));
        QVERIFY(fails(o, {loaded[0], {nullptr, 0}}, "no loaded model for B"));
        auto tiny = load_cpu_ctx(kData + "/models/llama-2-tiny-random.gguf", 64);
        QVERIFY(fails(o, {loaded[0], {tiny.get(), 0}}, "is not that file"));
        auto small = load_cpu_ctx(kQ4, 8);
        QVERIFY(fails(o, {loaded[0], {small.get(), 0}}, "B (" + kQ4 + ") needs"));
        wb::compare::CompareOptions f16 = o;
        f16.kv_type = wb::model::KvType::F16;
        QVERIFY(fails(f16, loaded, "f32 KV cache but the comparison asks for f16"));
        QCOMPARE(a->n_free_cells(), 64u);
    }

    void bad_workloads_fail_before_loading() {
        int loads = 0;
        auto counting = [&](const std::string& p, const wb::model::ContextParams& cp) {
            ++loads;
            return load_cpu(p, cp);
        };
        wb::compare::CompareOptions o;
        o.kv_type = wb::model::KvType::F32;  // as load_cpu_ctx loads them
        o.models = {kF32, kQ8};
        const QString shorttext = dir_.filePath("short.txt");
        write_file(shorttext, "Once upon a time there was a cat.");
        o.text_file = shorttext.toStdString();
        o.ppl_ctx = 128;
        try {
            wb::compare::run_compare(o, counting);
            QFAIL("short text accepted");
        } catch (const wb::compare::TextTooShort& e) {
            QVERIFY2(contains(e.what(), "short.txt") && contains(e.what(), "too short"), e.what());
        }
        o.text_file.reset();
        const QString empty = dir_.filePath("empty.jsonl");
        write_file(empty, "\n");
        o.testset_file = empty.toStdString();
        QVERIFY_THROWS_EXCEPTION(wb::compare::TestSetError, wb::compare::run_compare(o, counting));
        QCOMPARE(loads, 0);
        o.testset_file.reset();
        o.models = {};  // one model is A against itself (the Compare tab beside remote panes)
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, wb::compare::run_compare(o, counting));
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
