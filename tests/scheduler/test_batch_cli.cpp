// `workbench-cli batch` and `bench --concurrency` as a user runs them
// (QProcess on the built binary, real model, real files). Expected tokens
// come from llama.cpp's golden file; nothing asserts on timing.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/json_fixtures.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");

using Run = wbtest::ProcessResult;

Run run(const QStringList& args, int timeout_ms = 300000) {
    return wbtest::run_process(kCli, args, timeout_ms);
}

void write_file(const QString& path, const QByteArray& data) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

// The CLI's own output file, unlike a golden fixture: it may not exist yet
// (empty result) and a partial or broken line is fatal.
std::vector<QJsonObject> read_output_jsonl(const QString& path) {
    std::vector<QJsonObject> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.isEmpty()) continue;
        QJsonParseError err;
        const QJsonDocument d = QJsonDocument::fromJson(line, &err);
        if (err.error != QJsonParseError::NoError) qFatal("bad JSONL line: %s", line.constData());
        out.push_back(d.object());
    }
    return out;
}

std::vector<QJsonObject> golden() {
    return wbtest::read_jsonl(wbtest::data_dir() + "/golden/stories260K_greedy.jsonl");
}

}  // namespace

class TestBatchCli : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;

  private slots:
    void malformed_lines_stop_the_run() {
        const QString prompts = dir_.filePath("bad.jsonl");
        write_file(prompts,
                   "{\"prompt\": \"Once upon a time\", \"id\": \"a\"}\n"
                   "{\"prompt\": \"broken\n"
                   "\n"
                   "{\"id\": \"no-prompt\"}\n"
                   "{\"prompt\": \"The cat\", \"max_tokens\": \"ten\"}\n"
                   "{\"prompt\": \"Lily\", \"id\": \"b\", \"max_tokens\": 4}\n"
                   // nlohmann throws out_of_range (not parse_error) for 1e999;
                   // found by fuzzing, it used to end the CLI with no line number.
                   "{\"prompt\": \"Big\", \"max_tokens\": 1e999}\n");
        const QString out = dir_.filePath("bad-results.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "--out", out, "--no-log", "-n", "4"});
        QVERIFY2(r.code != 0, r.err.constData());
        QVERIFY2(r.err.contains("bad.jsonl:2: not valid JSON"), r.err.constData());
        QVERIFY2(r.err.contains("bad.jsonl:4: \"prompt\" is missing"), r.err.constData());
        QVERIFY2(r.err.contains("bad.jsonl:5: \"max_tokens\" is not an integer"),
                 r.err.constData());
        QVERIFY2(r.err.contains("bad.jsonl:7: not valid JSON"), r.err.constData());
        QVERIFY(r.err.contains("nothing was run"));
        QVERIFY2(r.err.contains("read as JSON Lines: its first non-blank line starts with '{'"),
                 r.err.constData());
        QVERIFY(read_output_jsonl(out).empty());

        const Run ok = run({"batch", "--prompts", prompts, "--out", out, "--no-log", "-n", "4",
                            "--skip-invalid", "--quiet"});
        QVERIFY2(ok.code == 0, ok.err.constData());
        const auto recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{2});
        for (const QJsonObject& o : recs) {
            QVERIFY(o["id"].toString() == "a" || o["id"].toString() == "b");
            QVERIFY(o["token_ids"].toArray().size() <= 4);
        }
    }

    void golden_prompts_match_llama_cpp_and_are_logged() {
        // The 6 golden prompts plus 10 plain ones, 4 at a time, greedy, EOS
        // ignored as in the golden run.
        QByteArray lines;
        const auto g = golden();
        for (const QJsonObject& o : g) {
            QJsonObject l;
            l["id"] = QString("g%1").arg(o["id"].toInt());
            l["prompt"] = o["prompt"];
            l["max_tokens"] = 48;
            lines += QJsonDocument(l).toJson(QJsonDocument::Compact) + "\n";
        }
        for (int i = 0; i < 10; ++i) {
            QJsonObject l;
            l["prompt"] = QString("The little dog number %1 saw").arg(i);
            l["max_tokens"] = 5 + i;
            lines += QJsonDocument(l).toJson(QJsonDocument::Compact) + "\n";
        }
        const QString prompts = dir_.filePath("golden.jsonl");
        write_file(prompts, lines);
        const QString out = dir_.filePath("golden-results.jsonl");
        const QString db = dir_.filePath("log.sqlite");
        const QString summary = dir_.filePath("summary.json");
        const Run r = run({"batch",
                           "--prompts",
                           prompts,
                           "--concurrency",
                           "4",
                           "--temp",
                           "0",
                           "--ignore-eos",
                           "--chunk",
                           "16",
                           "--backend",
                           "cpu",
                           "--out",
                           out,
                           "--db",
                           db,
                           "--summary-json",
                           summary,
                           "--price-per-m-input",
                           "1",
                           "--price-per-m-output",
                           "2"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(r.err.contains("TTFT (ms)"));  // the metrics table
        const auto recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{16});
        std::map<QString, QJsonObject> by_id;
        for (const QJsonObject& o : recs) by_id[o["id"].toString()] = o;
        for (const QJsonObject& o : g) {
            const QJsonObject rec = by_id.at(QString("g%1").arg(o["id"].toInt()));
            QCOMPARE(rec["finish_reason"].toString(), QString("length"));
            QCOMPARE(rec["token_ids"].toArray(), o["generated_token_ids"].toArray());
            QCOMPARE(rec["prompt_token_ids"].toArray(), o["prompt_token_ids"].toArray());
            QCOMPARE(rec["output"].toString(), o["generated_text"].toString());
            QVERIFY(rec["timings"].toObject()["ttft_ms"].toDouble() > 0);
            QCOMPARE(rec["timings"].toObject()["itl_ms"].toArray().size(), 47);
        }
        QCOMPARE(by_id.at("line-7")["token_ids"].toArray().size(), 5);  // first plain prompt
        QFile sf(summary);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        const QJsonObject sj = QJsonDocument::fromJson(sf.readAll()).object();
        QCOMPARE(sj["requests_finished"].toInt(), 16);
        QCOMPARE(sj["ttft_ms"].toObject()["count"].toInt(), 16);
        // Cost at 1 USD/M input and 2 USD/M output tokens, from the records'
        // own token lists: (prompt tokens + 2 x output tokens) / 1e6.
        double in_tokens = 0, out_tokens = 0;
        for (const QJsonObject& o : recs) {
            in_tokens += o["prompt_token_ids"].toArray().size();
            out_tokens += o["token_ids"].toArray().size();
        }
        const QJsonObject cost = sj["cost"].toObject();
        const double want = (in_tokens + 2 * out_tokens) / 1e6;
        QVERIFY2(std::abs(cost["total"].toDouble() - want) < 1e-12,
                 qPrintable(QJsonDocument(cost).toJson()));
        QVERIFY(std::abs(cost["per_request"].toDouble() - want / 16) < 1e-12);
        QVERIFY(std::abs(cost["per_m_output_tokens"].toDouble() - 1e6 * want / out_tokens) < 1e-9);
        QCOMPARE(sj["price"].toObject()["basis"].toString(), QString("per_m_tokens"));
        QVERIFY2(r.err.contains("cost: ") && r.err.contains("per 1k requests"), r.err.constData());

        // Every response is in the run log.
        const Run ex = run({"export", "--db", db, "--format", "jsonl"});
        QVERIFY2(ex.code == 0, ex.err.constData());
        QCOMPARE(ex.out.trimmed().split('\n').size(), 16);
    }

    void plain_text_prompts() {
        const QString prompts = dir_.filePath("plain.txt");
        write_file(prompts, "Once upon a time\n\nThe cat sat\r\nLily and Tom\n");
        const QString out = dir_.filePath("plain-results.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "-n", "3", "--no-log", "--quiet",
                           "--seed", "7", "--out", out});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{3});
        std::vector<QString> ids;
        for (const auto& o : recs) ids.push_back(o["id"].toString());
        std::sort(ids.begin(), ids.end());
        QCOMPARE(ids, (std::vector<QString>{"line-1", "line-3", "line-4"}));
    }

    void sigint_cancels_and_keeps_finished_records_data() {
        QTest::addColumn<int>("n_signals");
        QTest::newRow("one SIGINT") << 1;
        // `timeout -s INT` signals the process and its group: one interrupt
        // arrives twice, back to back, and must still cancel cleanly.
        QTest::newRow("two SIGINTs back to back") << 2;
    }

    void sigint_cancels_and_keeps_finished_records() {
        QFETCH(int, n_signals);
        // 40 requests of up to 300 tokens, 2 at a time: plenty still running
        // or queued when the first record appears and SIGINT arrives.
        QByteArray lines;
        for (int i = 0; i < 40; ++i)
            lines += QByteArray("Once upon a time ") + QByteArray::number(i) + "\n";
        const QString prompts = dir_.filePath("many.txt");
        write_file(prompts, lines);
        const QString out = dir_.filePath(QString("many-results-%1.jsonl").arg(n_signals));
        QProcess p;
        // The first request is short, so a record exists early.
        p.start(kCli, {"batch", "--prompts", prompts, "--concurrency", "2", "-n", "300",
                       "--ignore-eos", "-c", "512", "--no-log", "--out", out, "--backend", "cpu"});
        QVERIFY(p.waitForStarted());
        bool have_record = false;
        for (int i = 0; i < 3000 && !have_record; ++i) {
            QTest::qWait(100);
            have_record = !read_output_jsonl(out).empty();
            if (p.state() == QProcess::NotRunning) break;
        }
        QVERIFY2(have_record, "no record appeared");
        QVERIFY(p.state() == QProcess::Running);
        for (int i = 0; i < n_signals; ++i) ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        const auto recs = read_output_jsonl(out);  // every line is complete JSON
        QCOMPARE(recs.size(), size_t{40});         // finished ones plus the cancelled rest
        int length = 0, cancelled = 0;
        for (const auto& o : recs) {
            const QString reason = o["finish_reason"].toString();
            if (reason == "length") {
                ++length;
                QCOMPARE(o["token_ids"].toArray().size(), 300);
            }
            if (reason == "cancelled") ++cancelled;
        }
        QVERIFY(length >= 1);
        QVERIFY(cancelled >= 1);
        QCOMPARE(length + cancelled, 40);
        QVERIFY(p.readAllStandardError().contains("finish reasons:"));  // the summary came
    }

    void refused_requests_are_in_the_summary() {
        // -c 4, a context of 4 tokens: "Once upon a time" is 5 tokens with BOS
        // (llama.cpp's golden prompt_token_ids), so it is refused at submission;
        // "Hi" is 3 tokens and runs. The summary must count all three records.
        const QString prompts = dir_.filePath("refused.jsonl");
        write_file(prompts,
                   "{\"id\": \"long\", \"prompt\": \"Once upon a time\"}\n"
                   "{\"id\": \"a\", \"prompt\": \"Hi\", \"max_tokens\": 1}\n"
                   "{\"id\": \"b\", \"prompt\": \"Hi\", \"max_tokens\": 1}\n");
        const QString out = dir_.filePath("refused-results.jsonl");
        const QString summary = dir_.filePath("refused-summary.json");
        const Run r = run({"batch", "--prompts", prompts, "-c", "4", "--concurrency", "2", "--temp",
                           "0", "--backend", "cpu", "--no-log", "--quiet", "--out", out,
                           "--summary-json", summary});
        // One request failed: the run did not do all it was asked to, so
        // the exit status says so (it was 0), and the end counts them.
        QVERIFY2(r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("batch: 1 of 3 requests failed (error 1), 2 completed"),
                 r.err.constData());
        const auto recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{3});
        for (const QJsonObject& o : recs) {
            QCOMPARE(o["finish_reason"].toString(),
                     o["id"].toString() == "long" ? QString("error") : QString("length"));
        }
        QVERIFY2(r.err.contains("finish reasons: error 1, length 2") ||
                     r.err.contains("finish reasons: length 2, error 1"),
                 r.err.constData());
        QVERIFY2(r.err.contains("refused at submission: 1 of 3"), r.err.constData());
        QFile sf(summary);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        const QJsonObject sj = QJsonDocument::fromJson(sf.readAll()).object();
        QCOMPARE(sj["requests_submitted"].toInt(), 3);
        QCOMPARE(sj["requests_refused"].toInt(), 1);
        QCOMPARE(sj["requests_finished"].toInt(), 3);  // the scheduler's totals count it too
        QCOMPARE(sj["requests_completed"].toInt(), 2);
        QCOMPARE(sj["finish_reasons"].toObject()["error"].toInt(), 1);
        QCOMPARE(sj["finish_reasons"].toObject()["length"].toInt(), 2);
    }

    // Every request refused (each prompt longer than the 4-token context):
    // batch used to exit 0 with nothing generated. Now status 1 and the
    // counts; every record is still written.
    void every_request_refused_is_a_failed_run() {
        const QString prompts = dir_.filePath("all-refused.txt");
        write_file(prompts, "Once upon a time\nLily and Ben went to the park\n");
        const QString out = dir_.filePath("all-refused.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "-c", "4", "--backend", "cpu", "--no-log",
                           "--quiet", "--out", out});
        QVERIFY2(r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("batch: 2 of 2 requests failed (error 2), 0 completed"),
                 r.err.constData());
        QCOMPARE(read_output_jsonl(out).size(), size_t{2});
        // All completed: status 0 and no failure line.
        const Run ok = run({"batch", "--prompts", prompts, "-n", "2", "--backend", "cpu",
                            "--no-log", "--quiet", "--out", out});
        QVERIFY2(ok.code == 0, ok.err.constData());
        QVERIFY2(!ok.err.contains("failed"), ok.err.constData());
    }

    // A line with both "prompt" and "messages" ran the prompt and dropped
    // the conversation without a word; now it is a malformed line, named.
    void prompt_and_messages_on_one_line_is_an_error() {
        const QString prompts = dir_.filePath("both.jsonl");
        write_file(prompts,
                   "{\"prompt\": \"Once upon a time\"}\n"
                   "{\"prompt\": \"Hi\", \"messages\": [{\"role\": \"user\", \"content\": "
                   "\"Hi\"}]}\n");
        const Run r = run(
            {"batch", "--prompts", prompts, "-n", "2", "--backend", "cpu", "--no-log", "--quiet"});
        QVERIFY2(r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("both.jsonl:2: has both \"prompt\" and \"messages\""),
                 r.err.constData());
        QVERIFY2(r.err.contains("1 malformed line(s)") && r.err.contains("nothing was run"),
                 r.err.constData());
        QVERIFY(r.out.isEmpty());
    }

    // A "messages" line is rendered with the model's chat template, as
    // llama.cpp's chat renders it (the golden "chat" record of the tiny
    // Qwen2.5 model: its messages, rendered text and prompt ids).
    void messages_lines_render_with_the_model_template() {
        QJsonObject rec;
        const QJsonObject doc = wbtest::read_json(wbtest::data_dir() +
                                                  "/golden2/qwen2/goldens/f16.llamacpp.kvf32.json");
        for (const QJsonValue& v : doc["results"].toArray())
            if (v.toObject()["name"].toString() == "chat") rec = v.toObject();
        QVERIFY(!rec.isEmpty());
        const QString prompts = dir_.filePath("chat.jsonl");
        write_file(prompts, QJsonDocument(QJsonObject{{"id", "c1"}, {"messages", rec["messages"]}})
                                    .toJson(QJsonDocument::Compact) +
                                "\n");
        const QString out = dir_.filePath("chat-results.jsonl");
        const QString model =
            QString::fromStdString(wbtest::data_dir()) + "/golden2/qwen2/qwen2-f16.gguf";
        const Run r = run({"batch", "-m", model, "--prompts", prompts, "-n", "1", "--backend",
                           "cpu", "--no-log", "--quiet", "--out", out});
        QVERIFY2(r.code == 0, r.err.constData());
        const std::vector<QJsonObject> recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{1});
        QCOMPARE(recs[0]["prompt"].toString(), rec["rendered"].toString());
        QCOMPARE(recs[0]["prompt_token_ids"].toArray(), rec["prompt_ids"].toArray());
        QVERIFY2(!r.err.contains("note:"), r.err.constData());  // the model's own template
    }

    // Malformed messages are errors naming the file and line; an unknown
    // key is a warning naming its line, and the run goes on.
    void malformed_messages_and_unknown_keys() {
        const QString bad = dir_.filePath("badmsg.jsonl");
        write_file(bad,
                   "{\"prompt\": \"Once upon a time\"}\n"
                   "{\"messages\": [{\"role\": \"user\"}]}\n"
                   "{\"messages\": \"Hi\"}\n"
                   "{\"messages\": []}\n");
        const Run r =
            run({"batch", "--prompts", bad, "-n", "2", "--backend", "cpu", "--no-log", "--quiet"});
        QVERIFY2(r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("badmsg.jsonl:2: \"messages\"[0] needs a string \"content\""),
                 r.err.constData());
        QVERIFY2(r.err.contains("badmsg.jsonl:3: \"messages\" is not an array"), r.err.constData());
        QVERIFY2(r.err.contains("badmsg.jsonl:4: \"messages\" is empty"), r.err.constData());
        QVERIFY2(r.err.contains("3 malformed line(s)"), r.err.constData());

        const QString typo = dir_.filePath("prompts.jsonl");
        write_file(typo,
                   "{\"prompt\": \"Once upon a time\"}\n"
                   "{\"prompt\": \"The cat\", \"max_tokens\": 2}\n"
                   "{\"prompt\": \"Lily\", \"temprature\": 0.5}\n");
        const QString out = dir_.filePath("typo-results.jsonl");
        const Run w = run({"batch", "--prompts", typo, "-n", "2", "--backend", "cpu", "--no-log",
                           "--quiet", "--out", out});
        QVERIFY2(w.code == 0, w.err.constData());
        QVERIFY2(w.err.contains((typo + ":3: unknown key \"temprature\" ignored").toUtf8()),
                 w.err.constData());
        QCOMPARE(read_output_jsonl(out).size(), size_t{3});
    }

    // --system: a system message before every prompt, rendered by the one
    // rule; stories260K has no chat template, so plain text "SYSTEM\nPROMPT"
    // (hand-worked), with the note.
    void system_prompt_for_every_line() {
        const QString prompts = dir_.filePath("sys.txt");
        write_file(prompts, "Once upon a time\nThe little dog\n");
        const QString out = dir_.filePath("sys-results.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "--system", "A story.", "-n", "2",
                           "--backend", "cpu", "--no-log", "--quiet", "--out", out});
        QVERIFY2(r.code == 0, r.err.constData());
        std::map<QString, QString> by_id;
        for (const QJsonObject& o : read_output_jsonl(out))
            by_id[o["id"].toString()] = o["prompt"].toString();
        QCOMPARE(by_id["line-1"], QString("A story.\nOnce upon a time"));
        QCOMPARE(by_id["line-2"], QString("A story.\nThe little dog"));
        QVERIFY2(r.err.contains("note: no chat template in "), r.err.constData());
    }

    // The bundled set whose prompts share one system prompt: with the
    // default model the prefix cache hits (the summary's hit rate > 0).
    void bundled_shared_system_set_hits_the_prefix_cache() {
        const QString prompts =
            QStringLiteral(WB_SOURCE_DIR "/resources/prompts/shared-system12.jsonl");
        const QString summary = dir_.filePath("shared-summary.json");
        const Run r = run({"batch", "--prompts", prompts, "--concurrency", "4", "--backend", "cpu",
                           "--temp", "0", "--no-log", "--quiet", "--summary-json", summary, "-o",
                           dir_.filePath("shared-results.jsonl")});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(!r.err.contains("unknown key") && !r.err.contains("malformed"), r.err.constData());
        const QJsonObject j = wbtest::read_json(summary.toStdString());
        QCOMPARE(j["requests_submitted"].toInt(), 12);
        QVERIFY2(j["prefix_cached_tokens"].toInt() > 0, r.err.constData());
        QVERIFY2(j["prefix_hit_rate"].toDouble() > 0.0, r.err.constData());
    }

    void unwritable_summary_fails_before_running() {
        const QString prompts = dir_.filePath("nosummary.txt");
        write_file(prompts, "Hi\n");
        const QString out = dir_.filePath("nosummary-results.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "--no-log", "--out", out,
                           "--summary-json", dir_.filePath("no/such/dir/s.json")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("s.json: cannot write"), r.err.constData());
        QVERIFY(read_output_jsonl(out).empty());  // nothing ran
    }

    void duplicate_generated_id_names_both_lines() {
        // Line 1 takes the id line 2 would get by default.
        const QString prompts = dir_.filePath("dup.jsonl");
        write_file(prompts,
                   "{\"id\": \"line-2\", \"prompt\": \"Hi\"}\n"
                   "{\"prompt\": \"Hello\"}\n");
        const Run r = run({"batch", "--prompts", prompts, "--no-log", "-n", "1"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("dup.jsonl:2: duplicate id \"line-2\" (line 1 has it); this line "
                                "has no \"id\", give it one"),
                 r.err.constData());
    }

    void integers_past_int64_keep_their_digits() {
        // Found while fuzzing the prompt-file parser: JSON integers above
        // INT64_MAX were read as int64_t, so id 18446744073709551615 became
        // "-1" (and collided with a real "-1") and max_tokens
        // 18446744073709551615 was reported as "got -1".
        const QString prompts = dir_.filePath("u64.jsonl");
        write_file(prompts,
                   "{\"id\": 18446744073709551615, \"prompt\": \"Hi\"}\n"
                   "{\"id\": -1, \"prompt\": \"Hi\"}\n"
                   "{\"id\": \"c\", \"prompt\": \"Hi\", \"max_tokens\": 18446744073709551615}\n");
        const Run r = run({"batch", "--prompts", prompts, "--no-log", "-n", "1"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("u64.jsonl:3: \"max_tokens\" must be in [1, 1000000], got "
                                "18446744073709551615"),
                 r.err.constData());
        QVERIFY2(!r.err.contains("duplicate id"), r.err.constData());
        const QString out = dir_.filePath("u64-results.jsonl");
        const Run ok = run({"batch", "--prompts", prompts, "--backend", "cpu", "--no-log",
                            "--quiet", "-n", "1", "--skip-invalid", "--out", out});
        QVERIFY2(ok.code == 0, ok.err.constData());
        QStringList ids;
        for (const QJsonObject& o : read_output_jsonl(out)) ids << o["id"].toString();
        ids.sort();
        QCOMPARE(ids, (QStringList{"-1", "18446744073709551615"}));
    }

    void utf8_bom_jsonl_is_still_jsonl() {
        // Editors on Windows start the file with EF BB BF; the lines are still
        // JSON objects, so the prompt is "Hi", not the literal JSON text.
        const QString prompts = dir_.filePath("bom.jsonl");
        write_file(prompts, "\xEF\xBB\xBF{\"id\": \"x\", \"prompt\": \"Hi\", \"max_tokens\": 1}\n");
        const QString out = dir_.filePath("bom-results.jsonl");
        const Run r = run({"batch", "--prompts", prompts, "--backend", "cpu", "--no-log", "--quiet",
                           "--out", out});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto recs = read_output_jsonl(out);
        QCOMPARE(recs.size(), size_t{1});
        QCOMPARE(recs[0]["id"].toString(), QString("x"));
        QCOMPARE(recs[0]["prompt"].toString(), QString("Hi"));
        const Run d = run({"batch", "--prompts", dir_.path(), "--no-log"});
        QCOMPARE(d.code, 1);
        QVERIFY2(d.err.contains("is not a regular file (it is a folder)"), d.err.constData());
    }

    void bench_concurrency_checks_options_before_running() {
        // --step-tokens below the largest level: refused before level 1 runs.
        const Run st = run({"bench", "--concurrency", "1,8", "--step-tokens", "4", "-p", "4", "-n",
                            "2", "--backend", "cpu"});
        QCOMPARE(st.code, 2);
        QVERIFY2(st.err.contains("--step-tokens 4 is smaller than the largest level 8"),
                 st.err.constData());
        QVERIFY2(!st.out.contains("conc"), st.out.constData());  // no level ran
        // -p 16 + -n 4 needs 19 cells per request (the last token is not stored).
        const Run c = run(
            {"bench", "--concurrency", "2", "-c", "8", "-p", "16", "-n", "4", "--backend", "cpu"});
        QCOMPARE(c.code, 2);
        QVERIFY2(c.err.contains("-c 8 cannot hold one request: -p 16 prompt + -n 4 output "
                                "tokens need 19 KV cells; use -c 19 or more (38 for 2 requests"),
                 c.err.constData());
        const Run fits = run({"bench", "--concurrency", "2", "-c", "19", "-p", "16", "-n", "4",
                              "--requests", "2", "--json", "--backend", "cpu"});
        QVERIFY2(fits.code == 0, fits.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(fits.out).object();
        QCOMPARE(j["levels"].toArray()[0].toObject()["decode_tokens"].toInt(), 8);  // 2 * 4
        // Plain bench's help points to the serving mode.
        const Run h = run({"bench", "--help"});
        QCOMPARE(h.code, 0);
        QVERIFY(h.out.contains("bench --concurrency LIST"));
    }

    void bench_concurrency_json() {
        const Run r = run({"bench", "--concurrency", "1,3", "-p", "8", "-n", "6", "--requests", "6",
                           "--json", "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        const QJsonArray levels = j["levels"].toArray();
        QCOMPARE(levels.size(), 2);
        QCOMPARE(levels[0].toObject()["concurrency"].toInt(), 1);
        QCOMPARE(levels[1].toObject()["concurrency"].toInt(), 3);
        for (const auto& l : levels) {
            const QJsonObject o = l.toObject();
            QCOMPARE(o["requests_completed"].toInt(), 6);
            QCOMPARE(o["decode_tokens"].toInt(), 36);   // 6 requests * 6 tokens
            QCOMPARE(o["prefill_tokens"].toInt(), 48);  // 6 requests * 8 prompt tokens
            QCOMPARE(o["ttft_ms"].toObject()["count"].toInt(), 6);
            QCOMPARE(o["itl_ms"].toObject()["count"].toInt(), 30);  // 5 gaps per request
            // Rates over the run under vLLM's names (docs/metrics.md); the
            // queue wait with its percentiles; no run-wide "prefill" rate.
            for (const char* k : {"input_throughput", "output_throughput", "request_throughput",
                                  "speedup_output_throughput"}) {
                QVERIFY2(o[k].isDouble(), k);
            }
            QVERIFY(!o.contains("prefill_tokens_per_s") && !o.contains("decode_tokens_per_s"));
            const QJsonObject qw = o["queue_wait_ms"].toObject();
            QCOMPARE(qw["count"].toInt(), 6);
            for (const char* p : {"p50", "p95", "p99"}) QVERIFY2(qw[p].isDouble(), p);
        }
        const Run bad = run({"bench", "--concurrency", "1,x"});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains("'x'"));
    }

    void bench_concurrency_table_names_and_columns() {
        const Run r = run({"bench", "--concurrency", "1,2", "-p", "8", "-n", "4", "--requests", "3",
                           "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QStringList lines = QString::fromUtf8(r.out).split('\n');
        qsizetype h = -1;
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (lines[i].trimmed().startsWith("conc")) h = i;
        }
        QVERIFY2(h >= 0 && h + 2 < lines.size(), r.out.constData());
        const QString head = lines[h];
        for (const char* c : {"in tok/s", "out tok/s", "req/s", "wait p50", "wait p95", "wait p99"})
            QVERIFY2(head.contains(c), qPrintable(head));
        QVERIFY2(!r.out.contains("prefill"), r.out.constData());
        // Right-aligned columns: every level row ends its fields where the
        // header ends its column names.
        const QStringList names{"conc",     "requests", "wall s",   "in tok/s", "out tok/s",
                                "req/s",    "wait p50", "wait p95", "wait p99", "TTFT p50",
                                "TTFT p99", "ITL p50",  "ITL p99",  "speedup"};
        QList<qsizetype> want;
        qsizetype from = 0;
        for (const QString& n : names) {
            const qsizetype at = head.indexOf(n, from);
            QVERIFY2(at >= 0, qPrintable(n));
            from = at + n.size();
            want.push_back(from - 1);
        }
        for (qsizetype i = h + 1; i <= h + 2; ++i) {
            QList<qsizetype> got;
            const QString& line = lines[i];
            for (qsizetype c = 0; c < line.size(); ++c) {
                if (line[c] != ' ' && (c + 1 == line.size() || line[c + 1] == ' '))
                    got.push_back(c);
            }
            QVERIFY2(got == want, qPrintable(head + "\n" + line));
        }
    }

    // bench --cold-start on the CPU backend: it has no device and no
    // pipelines, so its table has neither phase and two modes (the hash
    // before the load, beside it), not three of which two are the same run;
    // every run reaches the same first token on the CPU backend.
    void bench_cold_start_on_cpu_has_cpu_rows() {
        const QString model =
            QString::fromStdString(wbtest::data_dir() + "/models/stories260K.gguf");
        const Run j = run({"bench", "--cold-start", "-m", model, "--backend", "cpu", "-r", "2",
                           "-p", "8", "--json"});
        QVERIFY2(j.code == 0, j.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(j.out).object();
        QCOMPARE(o["backend"].toString(), QStringLiteral("cpu"));
        const QJsonArray modes = o["modes"].toArray();
        QCOMPARE(modes.size(), 2);
        QCOMPARE(modes[0].toObject()["mode"].toString(), QStringLiteral("hash, then load"));
        QCOMPARE(modes[1].toObject()["mode"].toString(), QStringLiteral("hash beside load"));
        int first = -1;
        for (const QJsonValue& m : modes) {
            const QJsonObject phases = m.toObject()["phases"].toObject();
            QVERIFY(!phases.contains("device_ms"));
            QVERIFY(!phases.contains("pipelines_ms"));
            for (const char* k : {"process_start_ms", "hash_ms", "upload_ms", "first_prefill_ms",
                                  "to_first_token_ms"})
                QVERIFY2(phases.contains(k), k);
            const QJsonArray runs = m.toObject()["runs"].toArray();
            QCOMPARE(runs.size(), 2);
            for (const QJsonValue& r : runs) {
                QCOMPARE(r.toObject()["backend"].toString(), QStringLiteral("cpu"));
                if (first < 0) first = r.toObject()["first_token"].toInt();
                QCOMPARE(r.toObject()["first_token"].toInt(), first);
            }
        }
        const Run t =
            run({"bench", "--cold-start", "-m", model, "--backend", "cpu", "-r", "1", "-p", "8"});
        QVERIFY2(t.code == 0, t.err.constData());
        QVERIFY2(!t.out.contains("Vulkan device"), t.out.constData());
        QVERIFY2(!t.out.contains("pipeline creation"), t.out.constData());
        QVERIFY2(t.out.contains("hash beside load"), t.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestBatchCli)
#include "test_batch_cli.moc"
