// runlog::diff_runs on a small log written through RunLog (a real SQLite
// file): which tags are listed and in what order, "mixed" values, and the
// prompt comparison, every number worked out by hand below. Also the same
// run against itself, a run id that is not there, and first_divergence on
// multi-byte UTF-8.

#include <QTemporaryDir>
#include <QtTest>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "runlog/environment.h"
#include "runlog/run_diff.h"
#include "runlog/run_log.h"

using namespace wb::runlog;

namespace {

const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

struct Resp {
    const char* prompt;
    const char* output;
    std::optional<double> ttft, e2e;
    double temperature;
    int seed;
};

nlohmann::json settings(double temperature, int seed, bool chatml) {
    nlohmann::json j = {{"temperature", temperature}, {"top_k", 40},      {"seed", seed},
                        {"max_tokens", 16},           {"kv_type", "f32"}, {"backend", "cpu"},
                        {"prompt_mode", "raw"},       {"add_bos", true}};
    if (chatml) j["chat_template"] = "chatml";
    return j;
}

// The hand-worked case. Run A (app 0.1.0, concurrency 2) and run B (app
// 0.2.0, concurrency 4, chat_template "chatml" on every response):
//   prompt  A output        A ttft/e2e   B output        B ttft/e2e
//   p1      "Hello world"   10 / 100     "Hello there"   16 / 90
//   p2      "same"          20 / 200     "same"          26 / 260
//   p3      "héllo wörld"   30 / 300     "héllo wérld"   40 / 330
//   p4      "four"          -- / 400     "four"          -- / 410
//   only-a / only-b: answered by one run only.
// Matched 4, identical 2 (p2, p4): share 0.5. p1 parts at character 6
// ("world" / "there"); p3 at character 7 (h é l l o ' ' w, then ö / é).
// TTFT over 3 pairs: A {10, 20, 30} p50 20 mean 20; B {16, 26, 40} p50 26
// mean 82/3; deltas +6 and 82/3 - 20 = 22/3. e2e over 4 pairs: A {100,
// 200, 300, 400} p50 250 mean 250; B {90, 260, 330, 410} p50 (260 + 330)
// / 2 = 295, mean 1090 / 4 = 272.5; deltas +45 and +22.5.
// Temperature: A 0.8 everywhere, B 0.7 on p1 else 0.8 (B mixed). Seeds:
// A {1, 2}, B {2, 1} (both mixed, the same set: not a difference).
struct Fixture {
    std::string path;
    int64_t a = 0, b = 0;
    int64_t greedy1 = 0, greedy2 = 0;
};

Fixture make_log(const QString& dir) {
    Fixture f;
    f.path = (dir + "/diff.sqlite").toStdString();
    RunLog log = RunLog::open(f.path);
    const int64_t mv = log.ensure_model_version(kModel);
    EnvironmentInfo env = collect_environment("cpu");
    env.app_version = "0.1.0";
    const int64_t env_a = log.ensure_environment(env);
    env.app_version = "0.2.0";
    const int64_t env_b = log.ensure_environment(env);
    const std::vector<Resp> ra = {{"p1", "Hello world", 10, 100, 0.8, 1},
                                  {"p2", "same", 20, 200, 0.8, 2},
                                  {"p3", "h\xc3\xa9llo w\xc3\xb6rld", 30, 300, 0.8, 1},
                                  {"p4", "four", std::nullopt, 400, 0.8, 1},
                                  {"only-a", "x", 5, 50, 0.8, 1}};
    const std::vector<Resp> rb = {{"p1", "Hello there", 16, 90, 0.7, 2},
                                  {"only-b", "y", 5, 50, 0.8, 1},
                                  {"p2", "same", 26, 260, 0.8, 1},
                                  {"p3", "h\xc3\xa9llo w\xc3\xa9rld", 40, 330, 0.8, 1},
                                  {"p4", "four", std::nullopt, 410, 0.8, 1}};
    auto write = [&](const char* name, int concurrency, int64_t env_id, const std::vector<Resp>& rs,
                     bool chatml) {
        const int64_t run = log.begin_run("batch", name, {{"concurrency", concurrency}});
        for (const Resp& r : rs) {
            ResponseRecord rec;
            rec.run_id = run;
            rec.model_version_id = mv;
            rec.environment_id = env_id;
            rec.settings = settings(r.temperature, r.seed, chatml);
            rec.prompt = r.prompt;
            rec.output = r.output;
            rec.ttft_ms = r.ttft;
            rec.e2e_ms = r.e2e;
            rec.started_ms = 1'700'000'000'000;
            log.log_response(rec);
        }
        return run;
    };
    f.a = write("a.jsonl", 2, env_a, ra, false);
    f.b = write("b.jsonl", 4, env_b, rb, true);
    // Two greedy runs that differ only in the seed (1 vs 2) and top_k (40
    // vs 7): neither is used at temperature 0.
    for (int seed : {1, 2}) {
        const int64_t run = log.begin_run("generate", "greedy", nlohmann::json::object());
        ResponseRecord rec;
        rec.run_id = run;
        rec.model_version_id = mv;
        rec.environment_id = env_a;
        rec.settings = settings(0.0, seed, false);
        if (seed == 2) rec.settings["top_k"] = 7;
        rec.prompt = "p1";
        rec.output = "Hello";
        rec.started_ms = 1'700'000'000'000;
        log.log_response(rec);
        (seed == 1 ? f.greedy1 : f.greedy2) = run;
    }
    return f;
}

std::vector<std::string> keys(const RunDiff& d) {
    std::vector<std::string> k;
    for (const FieldDiff& f : d.fields) k.push_back(f.key);
    return k;
}

}  // namespace

class TestRunDiff : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    Fixture f_;

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        f_ = make_log(dir_.path());
    }

    void fieldsInOrder() {
        const RunDiff d = diff_runs_at(f_.path, f_.a, f_.b);
        const std::vector<std::string> want = {"tokenizer.chat_template", "sampling.temperature",
                                               "run.concurrency", "engine.app_version"};
        QCOMPARE(keys(d), want);
        QVERIFY(d.fields[0].changes_outputs);
        QVERIFY(d.fields[1].changes_outputs);
        QVERIFY(!d.fields[2].changes_outputs);
        QVERIFY(!d.fields[3].changes_outputs);
        QCOMPARE(d.fields[0].a.values, std::vector<std::string>{"(none)"});
        QCOMPARE(d.fields[0].b.values, std::vector<std::string>{"chatml"});
        // B's responses disagree among themselves: mixed, in the order seen.
        QCOMPARE(d.fields[1].a.text(), std::string("0.8"));
        QVERIFY(d.fields[1].b.mixed());
        QCOMPARE(d.fields[1].b.text(), std::string("mixed: 0.7 | 0.8"));
        QCOMPARE(d.fields[3].a.text(), std::string("0.1.0"));
        QCOMPARE(d.fields[3].b.text(), std::string("0.2.0"));
        QCOMPARE(d.a.kind, std::string("batch"));
        QCOMPARE(d.b.name, std::string("b.jsonl"));
        QVERIFY(d.warnings.empty());
    }

    void promptComparisonByHand() {
        const RunDiff d = diff_runs_at(f_.path, f_.a, f_.b);
        const PromptComparison& p = d.prompts;
        QCOMPARE(p.a_responses, size_t{5});
        QCOMPARE(p.b_responses, size_t{5});
        QCOMPARE(p.matched, size_t{4});
        QCOMPARE(p.identical, size_t{2});
        QCOMPARE(*p.identical_share(), 0.5);
        QCOMPARE(p.divergences.size(), size_t{2});
        QCOMPARE(*p.divergences[0].offset, size_t{6});
        QCOMPARE(p.divergences[0].a_excerpt, std::string("world"));
        QCOMPARE(p.divergences[0].b_excerpt, std::string("there"));
        QCOMPARE(p.divergences[0].prompt_excerpt, std::string("p1"));
        QCOMPARE(*p.divergences[1].offset, size_t{7});
        QCOMPARE(p.divergences[1].a_excerpt, std::string("\xc3\xb6rld"));
        QCOMPARE(p.divergences[1].b_excerpt, std::string("\xc3\xa9rld"));
        QCOMPARE(p.ttft.pairs, size_t{3});
        QCOMPARE(*p.ttft.a_p50, 20.0);
        QCOMPARE(*p.ttft.b_p50, 26.0);
        QCOMPARE(*p.ttft.p50_delta(), 6.0);
        QVERIFY(std::abs(*p.ttft.mean_delta() - 22.0 / 3.0) < 1e-9);
        QCOMPARE(p.e2e.pairs, size_t{4});
        QCOMPARE(*p.e2e.a_p50, 250.0);
        QCOMPARE(*p.e2e.b_p50, 295.0);
        QCOMPARE(*p.e2e.p50_delta(), 45.0);
        QCOMPARE(*p.e2e.mean_delta(), 22.5);
        const nlohmann::json j = to_json(d);
        QCOMPARE(j["prompts"]["identical_share"].get<double>(), 0.5);
        QCOMPARE(j["prompts"]["e2e_ms"]["p50_delta"].get<double>(), 45.0);
        QCOMPARE(j["fields"].size(), size_t{4});
        QCOMPARE(j["fields"][1]["b"].size(), size_t{2});
        QVERIFY(j["fields"][1]["b_mixed"].get<bool>());
    }

    void greedyRunsDoNotMarkSeedOrTopK() {
        const RunDiff d = diff_runs_at(f_.path, f_.greedy1, f_.greedy2);
        const std::vector<std::string> want = {"sampling.top_k", "sampling.seed"};
        QCOMPARE(keys(d), want);
        for (const FieldDiff& f : d.fields) {
            QVERIFY(!f.changes_outputs);
            QVERIFY2(f.label.find("(not used: greedy)") != std::string::npos, f.label.c_str());
        }
        // At temperature 0.8 the same seed difference changes outputs.
        const RunDiff s = diff_runs_at(f_.path, f_.a, f_.greedy1);
        for (const FieldDiff& f : s.fields)
            if (f.key == "sampling.temperature") QVERIFY(f.changes_outputs);
    }

    void runAgainstItself() {
        const RunDiff d = diff_runs_at(f_.path, f_.b, f_.b);
        QVERIFY(d.fields.empty());
        QCOMPARE(d.prompts.matched, size_t{5});
        QCOMPARE(d.prompts.identical, size_t{5});
        QCOMPARE(*d.prompts.identical_share(), 1.0);
        QCOMPARE(*d.prompts.e2e.mean_delta(), 0.0);
    }

    void missingRunIsNamed() {
        try {
            (void)diff_runs_at(f_.path, f_.a, 999);
            QFAIL("no error for run 999");
        } catch (const RunNotFound& e) {
            QCOMPARE(e.id(), int64_t{999});
            QVERIFY2(
                std::string(e.what()).find("run 999 is not in the run log") != std::string::npos,
                e.what());
        }
        QVERIFY_THROWS_EXCEPTION(OpenError,
                                 diff_runs_at((dir_.path() + "/none.sqlite").toStdString(), 1, 2));
    }

    // A log with a damaged page in the middle of the responses table (the
    // leaf found with SQLite's dbstat, overwritten with garbage): the runs
    // and the responses before the damage are still compared, and a
    // warning says what could not be read.
    void damagedLogReportsWhatItCan() {
        const std::string path = (dir_.path() + "/damaged.sqlite").toStdString();
        int64_t run = 0;
        {
            RunLog log = RunLog::open(path);
            const int64_t mv = log.ensure_model_version(kModel);
            const int64_t env = log.ensure_environment(collect_environment("cpu"));
            run = log.begin_run("batch", "big", nlohmann::json::object());
            for (int i = 0; i < 60; ++i) {
                ResponseRecord rec;
                rec.run_id = run;
                rec.model_version_id = mv;
                rec.environment_id = env;
                rec.settings = settings(0.8, 1, false);
                rec.prompt = "prompt " + std::to_string(i) + std::string(300, 'p');
                rec.output = "output " + std::to_string(i) + std::string(300, 'o');
                rec.started_ms = 1'700'000'000'000;
                log.log_response(rec);
            }
        }
        std::vector<int64_t> leaves;
        {
            wbtest::RawSqlite raw(path, true);
            raw.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
            for (const auto& r : raw.rows("SELECT pageno FROM dbstat WHERE name = 'responses' "
                                          "AND pagetype = 'leaf' ORDER BY path"))
                leaves.push_back(std::stoll(r[0]));
        }
        QVERIFY2(leaves.size() >= 6, "the responses should span several pages");
        {
            QFile f(QString::fromStdString(path));
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek((leaves[leaves.size() / 2] - 1) * 4096));
            QVERIFY(f.write(QByteArray(4096, '\x5a')) == 4096);
        }
        const RunDiff d = diff_runs_at(path, run, run);
        QVERIFY(!d.warnings.empty());
        QVERIFY2(d.warnings[0].find("damaged") != std::string::npos, d.warnings[0].c_str());
        QVERIFY(d.prompts.a_responses > 0);
        QVERIFY(d.prompts.a_responses < 60);
        QVERIFY(d.fields.empty());
    }

    void firstDivergence() {
        QCOMPARE(first_divergence("abc", "abd"), std::optional<size_t>(2));
        QCOMPARE(first_divergence("ab", "abc"), std::optional<size_t>(2));
        QCOMPARE(first_divergence("abc", "abc"), std::optional<size_t>());
        QCOMPARE(first_divergence("", "x"), std::optional<size_t>(0));
        // "é" (C3 A9) and "è" (C3 A8) share their first byte: character 1.
        QCOMPARE(first_divergence("a\xc3\xa9", "a\xc3\xa8"), std::optional<size_t>(1));
    }
};

QTEST_GUILESS_MAIN(TestRunDiff)
#include "test_run_diff.moc"
