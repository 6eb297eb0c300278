// workbench-cli as a user runs it (QProcess on the built binary): generate,
// tokenize and info against llama.cpp's golden data and the fixture
// manifest, and error paths (bad file, broken file, bad option).

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/golden2.h"
#include "common/json_fixtures.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());

using Run = wbtest::ProcessResult;

Run run_cli(const QStringList& args) {
    return wbtest::run_process(kCli, args, 120000);
}

std::vector<QJsonObject> golden() {
    return wbtest::read_jsonl(kData.toStdString() + "/golden/stories260K_greedy.jsonl");
}

QString ids_line(const QJsonArray& a) {
    QStringList s;
    for (const auto& v : a) s << QString::number(v.toInt());
    return s.join(' ');
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }

    void generate_json_equals_golden() {
        WB_SKIP_WITHOUT_VULKAN();
        for (const QJsonObject& g : golden()) {
            const Run r = run_cli({"generate", "--backend", "vulkan", "-p", g["prompt"].toString(),
                                   "-n", "48", "--temp", "0", "--json"});
            QVERIFY2(r.code == 0, r.err.constData());
            const QJsonObject j = QJsonDocument::fromJson(r.out).object();
            QCOMPARE(j["prompt_token_ids"].toArray(), g["prompt_token_ids"].toArray());
            QCOMPARE(j["generated_token_ids"].toArray(), g["generated_token_ids"].toArray());
            QCOMPARE(j["text"].toString(), g["generated_text"].toString());
            QCOMPARE(j["finish_reason"].toString(), QString("length"));
            QVERIFY(j["timings"].toObject()["ttft_ms"].toDouble() > 0.0);
        }
    }

    void bench_profile_json_counts_ops_and_host_phases() {
        WB_SKIP_WITHOUT_VULKAN();
        // stories260K, 5 layers: per decode step 4 matrix x vector products
        // a layer (Q|K|V stacked, output projection, gate|up stacked, down)
        // + the output one = 21, one attention a layer (spans of a few
        // cells are never split), and the host phases as numbers.
        const Run r = run_cli({"bench", "--backend", "vulkan", "-p", "16", "-n", "4", "-r", "2",
                               "--profile", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["tg"].toObject()["all"].toArray().size(), 2);
        QVERIFY(j["tg"].toObject()["median"].toDouble() > 0.0);
        const QJsonObject step = j["profile_decode_step"].toObject();
        double mat_vec_calls = 0, attention_calls = 0, share = 0;
        for (const auto& v : step["ops"].toArray()) {
            const QJsonObject op = v.toObject();
            if (op["op"].toString().startsWith("mul_mat_vec"))
                mat_vec_calls += op["calls"].toDouble();
            if (op["op"].toString() == "attention") attention_calls += op["calls"].toDouble();
            share += op["share"].toDouble();
        }
        QCOMPARE(mat_vec_calls, 21.0);
        QCOMPARE(attention_calls, 5.0);
        QVERIFY(std::abs(share - 1.0) < 1e-9);
        const QJsonObject host = step["host_ms"].toObject();
        for (const char* k : {"prepare", "record", "submit_to_fence", "logits_readback"})
            QVERIFY2(host[k].isDouble() && host[k].toDouble() >= 0.0, k);
        QVERIFY(host["submit_to_fence"].toDouble() > 0.0);
        // Decode steps of one shape replay the first one's command buffer.
        QCOMPARE(step["calls"].toInt(), 4);
        QCOMPARE(step["recorded"].toInt(), 1);
    }

    void bench_profile_and_thread_scaling_on_cpu() {
        // The CPU backend's per-op wall times, counted as the Vulkan test
        // above counts them: per decode step of stories260K (5 layers) 21
        // matrix products, 5 attentions and KV writes, and 2 norms a layer
        // + the final one = 11 (rms_norm and the fused add_rms_norm); no
        // host phases (nothing is recorded or submitted). With -t 1,2 each
        // count runs and the first one's speedup is 1.
        const Run r = run_cli({"bench", "--backend", "cpu", "-t", "1,2", "-p", "16", "-n", "4",
                               "-r", "1", "--profile", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        const QJsonArray scaling = j["thread_scaling"].toArray();
        QCOMPARE(scaling.size(), 2);
        QCOMPARE(scaling[0].toObject()["threads"].toInt(), 1);
        QCOMPARE(scaling[1].toObject()["threads"].toInt(), 2);
        QCOMPARE(scaling[0].toObject()["tg_speedup"].toDouble(), 1.0);
        QVERIFY(scaling[1].toObject()["tg"].toObject()["median"].toDouble() > 0.0);
        for (const QJsonValue& run : scaling) {
            for (const char* which : {"profile_prefill", "profile_decode_step"}) {
                const QJsonObject prof = run.toObject()[which].toObject();
                QVERIFY2(!prof.contains("host_ms"), which);
                double matmul = 0, attention = 0, kv = 0, norms = 0, share = 0;
                for (const auto& v : prof["ops"].toArray()) {
                    const QJsonObject op = v.toObject();
                    const QString name = op["op"].toString();
                    const double calls = op["calls"].toDouble();
                    if (name.startsWith("matmul ")) matmul += calls;
                    if (name == "attention") attention += calls;
                    if (name == "kv_write") kv += calls;
                    if (name == "rms_norm" || name == "add_rms_norm") norms += calls;
                    QVERIFY2(op["ms"].isDouble() && op["ms"].toDouble() >= 0.0, qPrintable(name));
                    share += op["share"].toDouble();
                }
                QCOMPARE(matmul, 21.0);
                QCOMPARE(attention, 5.0);
                QCOMPARE(kv, 5.0);
                QCOMPARE(norms, 11.0);
                QVERIFY(std::abs(share - 1.0) < 1e-9);
            }
        }
        // The table: a speedup column, a row per count and test.
        const Run t = run_cli({"bench", "--backend", "cpu", "-t", "1,2", "-p", "8", "-n", "2", "-r",
                               "1", "--profile"});
        QVERIFY2(t.code == 0, t.err.constData());
        QVERIFY2(t.out.contains("speedup") && t.out.contains("cpu 1t") && t.out.contains("cpu 2t"),
                 t.out.constData());
        QVERIFY2(t.out.contains("per-op wall time, cpu 2t"), t.out.constData());
        // A list needs the CPU backend; a bad item names the list.
        const Run v = run_cli({"bench", "--backend", "vulkan", "-t", "1,2", "-r", "1"});
        QCOMPARE(v.code, 2);
        QVERIFY2(v.err.contains("needs --backend cpu"), v.err.constData());
        const Run b = run_cli({"bench", "--backend", "cpu", "-t", "1,x", "-r", "1"});
        QCOMPARE(b.code, 2);
        QVERIFY2(b.err.contains("-t 1,x"), b.err.constData());
    }

    void bench_bandwidth_and_decode_weight_gbps() {
        // bench --bandwidth alone: the read bandwidth at -t 1, in GB/s, over
        // a buffer of at least 256 MiB (figures > 0; no timing asserts).
        const Run a = run_cli({"bench", "--bandwidth", "-t", "1", "-r", "2", "--json"});
        QVERIFY2(a.code == 0, a.err.constData());
        const QJsonObject bw = QJsonDocument::fromJson(a.out).object()["bandwidth"].toObject();
        QCOMPARE(bw["threads"].toInt(), 1);
        QCOMPARE(bw["unit"].toString(), QString("GB/s (1e9 bytes/s)"));
        QVERIFY(bw["buffer_bytes"].toDouble() >= 256.0 * 1024 * 1024);
        QCOMPARE(bw["all"].toArray().size(), 2);
        QVERIFY(bw["median"].toDouble() > 0.0 && bw["min"].toDouble() <= bw["max"].toDouble());
        // With a model: tg's weight GB/s = the weight bytes of one decode
        // step x tokens/s. stories260K's, worked by hand from its shapes in
        // tests/model/test_weight_traffic.cpp: 1040384 (every tensor, one
        // row of the untied token embedding). The share divides by the
        // bandwidth measured at the same thread count.
        const Run r =
            run_cli({"bench", "-m", kData + "/models/stories260K.gguf", "--backend", "cpu", "-t",
                     "1", "-p", "4", "-n", "4", "-r", "1", "--bandwidth", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["decode_weight_bytes"].toDouble(), 1040384.0);
        const QJsonObject tg = j["tg"].toObject();
        const double want = tg["median"].toDouble() * 1040384.0 / 1e9;
        QVERIFY(want > 0.0);
        QVERIFY(std::abs(tg["weight_gbps"].toDouble() - want) <= 1e-9 * want);
        const double mem = j["bandwidth"].toObject()["median"].toDouble();
        QCOMPARE(j["bandwidth"].toObject()["threads"].toInt(), 1);
        QVERIFY(std::abs(tg["bandwidth_share"].toDouble() - want / mem) <= 1e-9 * want / mem);
        // The table: both columns, and the bandwidth table under it.
        const Run t = run_cli({"bench", "-m", kData + "/models/stories260K.gguf", "--backend",
                               "cpu", "-t", "1", "-p", "4", "-n", "4", "-r", "1", "--bandwidth"});
        QVERIFY2(t.code == 0, t.err.constData());
        for (const char* s : {"weight GB/s", "of bandwidth", "read bandwidth", "1.04 MB"})
            QVERIFY2(t.out.contains(s), t.out.constData());
    }

    void bench_table_columns_line_up() {
        // stories260K's shape is no synth shape, so it reads "n_embd 64,
        // n_layer 5, n_ff 172": longer than a fixed-width column. Every
        // line of the table still has its '|' at the same places.
        const Run r = run_cli({"bench", "-p", "4", "-n", "2", "-r", "1", "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        QList<QList<qsizetype>> bars;
        for (const QString& line : QString::fromUtf8(r.out).split('\n')) {
            if (!line.startsWith('|')) continue;
            QList<qsizetype> at;
            for (qsizetype i = 0; i < line.size(); ++i) {
                if (line[i] == '|') at.push_back(i);
            }
            bars.push_back(at);
        }
        QCOMPARE(bars.size(), qsizetype{3});      // header, pp, tg
        QCOMPARE(bars[0].size(), qsizetype{10});  // 9 columns, weight GB/s the last
        QVERIFY2(bars[1] == bars[0] && bars[2] == bars[0], r.out.constData());
        QVERIFY2(r.out.contains("n_embd 64, n_layer 5, n_ff 172"), r.out.constData());
    }

    void generate_on_cpu_reference_equals_golden() {
        const QJsonObject g = golden()[0];
        const Run r = run_cli({"generate", "--backend", "cpu", "-p", g["prompt"].toString(), "-n",
                               "48", "--temp", "0", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["backend"].toString(), QString("cpu"));
        QCOMPARE(j["generated_token_ids"].toArray(), g["generated_token_ids"].toArray());
        QCOMPARE(j["text"].toString(), g["generated_text"].toString());
    }

    // Past the model's training context (the tiny
    // llama-spm model: 512) on a larger pool, generate and batch run and say so on stderr,
    // once per request that goes past, plus once at load when the pool per
    // sequence is larger; a short request has no warning.
    void past_the_training_context_is_warned() {
        const QString model = kData + "/golden2/llama-spm/llama-spm-f16.gguf";
        const QString long_prompt = QString("Lily went to the park with her mom. ").repeated(80);
        const QByteArray past = "tokens go past the model's training context (512 tokens)";
        const QByteArray pool =
            "the context per sequence (2048 tokens) is larger than the model's training context "
            "(512 tokens)";
        const Run l = run_cli({"generate", "-m", model, "--backend", "cpu", "-c", "2048", "-p",
                               long_prompt, "-n", "2", "--temp", "0", "--no-log"});
        QVERIFY2(l.code == 0, l.err.constData());
        QVERIFY2(l.err.contains(past), l.err.constData());
        QVERIFY2(l.err.contains("warning: the prompt's "), l.err.constData());
        QCOMPARE(l.err.count(past), qsizetype{1});
        QVERIFY2(l.err.contains(pool), l.err.constData());
        const Run sh = run_cli({"generate", "-m", model, "--backend", "cpu", "-c", "2048", "-p",
                                "Once upon a time", "-n", "2", "--temp", "0", "--no-log"});
        QVERIFY2(sh.code == 0, sh.err.constData());
        QVERIFY2(!sh.err.contains(past), sh.err.constData());
        QVERIFY2(sh.err.contains(pool), sh.err.constData());  // the pool is still larger
        // The default context (the training context): no warning at all.
        const Run d = run_cli({"generate", "-m", model, "--backend", "cpu", "-p",
                               "Once upon a time", "-n", "2", "--temp", "0", "--no-log"});
        QVERIFY2(d.code == 0, d.err.constData());
        QVERIFY2(!d.err.contains("training context"), d.err.constData());

        // batch: the line that goes past is named; its record has the flag.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile prompts(dir.filePath("prompts.txt"));
        QVERIFY(prompts.open(QIODevice::WriteOnly));
        prompts.write("Once upon a time\n");
        prompts.write(long_prompt.toUtf8() + "\n");
        prompts.close();
        const Run b = run_cli({"batch", "-m", model, "--backend", "cpu", "-c", "2048",
                               "--concurrency", "1", "--prompts", prompts.fileName(), "-n", "2",
                               "--temp", "0", "--no-log", "-q", "-o", dir.filePath("out.jsonl")});
        QVERIFY2(b.code == 0, b.err.constData());
        QVERIFY2(b.err.contains("warning: line 2: "), b.err.constData());
        QVERIFY2(!b.err.contains("warning: line 1: "), b.err.constData());
        QCOMPARE(b.err.count(past), qsizetype{1});
        QVERIFY2(b.err.contains(pool), b.err.constData());
        const std::vector<QJsonObject> recs =
            wbtest::read_jsonl(dir.filePath("out.jsonl").toStdString());
        QCOMPARE(recs.size(), size_t{2});
        for (const QJsonObject& r : recs)
            QCOMPARE(r["past_n_ctx_train"].toBool(), r["prompt_tokens"].toInt() > 512);
    }

    void generate_streams_text_and_reports_timings() {
        WB_SKIP_WITHOUT_VULKAN();
        const QJsonObject g = golden()[0];
        const Run r = run_cli({"generate", "--backend", "vulkan", "-p", "Once upon a time", "-n",
                               "48", "--temp", "0"});
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(QString::fromUtf8(r.out), g["generated_text"].toString() + "\n");
        QVERIFY(r.err.contains("prompt tokens:    5"));
        QVERIFY(r.err.contains("generated tokens: 48"));
        QVERIFY(r.err.contains("TTFT:"));
        QVERIFY(r.err.contains("tokens/s"));
    }

    void one_token_has_no_decode_rate() {
        // -n 1: the only token comes from prefill, so there is no decode step
        // and no decode rate or TPOT (not 0 tokens/s, which reads as "stalled").
        const Run j = run_cli({"generate", "--backend", "cpu", "-p", "Once upon a time", "-n", "1",
                               "--temp", "0", "--json", "--no-log"});
        QVERIFY2(j.code == 0, j.err.constData());
        const QJsonObject t = QJsonDocument::fromJson(j.out).object()["timings"].toObject();
        QVERIFY(t["tpot_ms"].isNull());
        QVERIFY(t["decode_tokens_per_s"].isNull());
        QVERIFY(t["ttft_ms"].toDouble() > 0.0);
        const Run r = run_cli({"generate", "--backend", "cpu", "-p", "Once upon a time", "-n", "1",
                               "--temp", "0", "--no-log"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.err.contains("generated tokens: 1"), r.err.constData());
        QVERIFY2(r.err.contains("decode:           - (no decode step"), r.err.constData());
        QVERIFY2(!r.err.contains("TPOT 0.000"), r.err.constData());
    }

    void out_of_memory_says_what_to_lower() {
#if defined(__SANITIZE_ADDRESS__)
        QSKIP("ASan reserves more address space than the limit below allows");
#else
        // 16777216 KV cells of the 5-layer, 32-wide K/V model on the CPU
        // backend need 16777216 * 5 * 2 * 32 * 4 bytes = 20 GiB: more than a
        // 2 GB address-space limit, so the allocation fails for sure.
        const Run r = wbtest::run_process(
            "/bin/sh", {"-c", "ulimit -v 2000000 && exec \"$0\" \"$@\"", kCli, "generate",
                        "--backend", "cpu", "-p", "hi", "-n", "2", "-c", "16777216", "--no-log"});
        // Refused before allocating (it used to try, and end in bad_alloc),
        // naming the sizes, the limit and what to lower.
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("not enough memory for the CPU backend"), r.err.constData());
        QVERIFY2(r.err.contains("20.00 GiB of KV cache for 16777216 cells"), r.err.constData());
        QVERIFY2(r.err.contains("ulimit -v"), r.err.constData());
        QVERIFY2(r.err.contains("lower -c"), r.err.constData());
        QVERIFY2(!r.err.contains("bad_alloc"), r.err.constData());
#endif
    }

    void same_seed_same_text() {
        const QStringList a = {"generate", "-p", "Tom had a dog", "-n", "24",
                               "--seed",   "77", "--json"};
        const Run r1 = run_cli(a), r2 = run_cli(a);
        QVERIFY2(r1.code == 0, r1.err.constData());
        const QJsonObject j1 = QJsonDocument::fromJson(r1.out).object();
        const QJsonObject j2 = QJsonDocument::fromJson(r2.out).object();
        QCOMPARE(j1["generated_token_ids"], j2["generated_token_ids"]);
        QCOMPARE(j1["sampling"].toObject()["seed"].toInteger(), 77);
    }

    void db_option_needs_no_home_folder() {
        // --db names the run log, so a machine without HOME (a service, a
        // container) can still log; without --db the error says what to do.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("HOME");
        env.remove("XDG_DATA_HOME");
        const auto run_without_home = [&](const QStringList& args) {
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(kCli, args);
            if (!p.waitForFinished(120000)) p.kill();
            p.waitForFinished();
            return std::pair{p.exitCode(), p.readAllStandardError()};
        };
        const QString db = dir.filePath("runlog.sqlite");
        const auto [ok_code, ok_err] = run_without_home(
            {"generate", "-p", "Once upon a time", "-n", "4", "--temp", "0", "--db", db});
        QVERIFY2(ok_code == 0, ok_err.constData());
        QVERIFY(QFile::exists(db));
        const auto [bad_code, bad_err] =
            run_without_home({"generate", "-p", "Once upon a time", "-n", "4", "--temp", "0"});
        QCOMPARE(bad_code, 1);
        QVERIFY2(bad_err.contains("pass --db PATH"), bad_err.constData());
    }

    void compare_logs_to_db_unless_no_log() {
        // compare takes --db and --no-log as generate and batch do: every
        // response (3 built-in prompts per model) goes to one "compare" run.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString model = kData + "/models/stories260K.gguf";
        const QString db = dir.filePath("runlog.sqlite");
        const Run r = run_cli({"compare", "-m", model, "-m", model, "-n", "4", "--backend", "cpu",
                               "--json", "--db", db});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.err.contains("compare: logged 6 responses as run"), r.err.constData());
        const Run e = run_cli({"export", "--db", db, "--format", "jsonl"});
        QVERIFY2(e.code == 0, e.err.constData());
        QStringList ids;
        for (const QByteArray& line : e.out.split('\n')) {
            if (line.isEmpty()) continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QCOMPARE(o["run_kind"].toString(), QString("compare"));
            ids << o["request_id"].toString();
        }
        ids.sort();
        QCOMPARE(ids, QStringList({"A/p0", "A/p1", "A/p2", "B/p0", "B/p1", "B/p2"}));
        // --no-log: nothing is opened or written, not even with --db.
        const QString none = dir.filePath("none.sqlite");
        const Run n = run_cli({"compare", "-m", model, "-m", model, "-n", "2", "--backend", "cpu",
                               "--json", "--db", none, "--no-log"});
        QVERIFY2(n.code == 0, n.err.constData());
        QVERIFY(!QFile::exists(none));
        QVERIFY(!n.err.contains("logged"));
    }

    void tokenize_prints_golden_ids() {
        for (const QJsonObject& g : golden()) {
            const Run r = run_cli({"tokenize", "-p", g["prompt"].toString()});
            QVERIFY2(r.code == 0, r.err.constData());
            QCOMPARE(QString::fromUtf8(r.out).trimmed(), ids_line(g["prompt_token_ids"].toArray()));
        }
        const Run nb = run_cli({"tokenize", "-p", "Once upon a time", "--no-bos"});
        QCOMPARE(QString::fromUtf8(nb.out).trimmed(), QString("403 407 261 378"));
    }

    void default_backend_follows_the_hardware() {
        // Without --backend, generate, bench, batch and compare run
        // Vulkan only when a Vulkan device is a real GPU; when every device is
        // a CPU device (lavapipe here) or there is none, the CPU backend with
        // one thread per physical core. `devices` says which and why.
        const Run dev = run_cli({"devices"});
        QVERIFY2(dev.code == 0, dev.err.constData());
        int n_devices = 0, n_cpu = 0;
        static const QRegularExpression type_line(QStringLiteral("^\\s+type:\\s+(.*)$"));
        for (const QString& l : QString::fromUtf8(dev.out).split('\n')) {
            const QRegularExpressionMatch m = type_line.match(l);
            if (!m.hasMatch()) continue;
            ++n_devices;
            if (m.captured(1) == "CPU") ++n_cpu;
        }
        const bool gpu = n_cpu < n_devices;
        const QString expected = gpu ? "vulkan" : "cpu";
        qInfo() << n_devices << "Vulkan devices," << n_cpu << "of them CPUs: default" << expected;
        static const QRegularExpression default_line(
            QStringLiteral("^default backend: (\\w+)(, (\\d+) threads)? \\(default: (.*)\\)$"),
            QRegularExpression::MultilineOption);
        const QRegularExpressionMatch d = default_line.match(QString::fromUtf8(dev.out));
        QVERIFY2(d.hasMatch(), dev.out.constData());
        QCOMPARE(d.captured(1), expected);
        QVERIFY2(d.captured(4).startsWith(gpu ? "GPU found: " : "no GPU found: "),
                 dev.out.constData());

        // The command of the issue: bench with no backend flag.
        const Run b = run_cli(
            {"bench", "-m", kData + "/models/stories260K.gguf", "-p", "64", "-n", "32", "--json"});
        QVERIFY2(b.code == 0, b.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(b.out).object();
        QCOMPARE(j["backend"].toString(), expected);
        QVERIFY2(j["backend_reason"].toString().startsWith(gpu ? "GPU found: " : "no GPU found: "),
                 b.out.constData());
        if (!gpu) {
            // One thread per physical core: what `devices` reported, at most
            // the hardware threads.
            QCOMPARE(j["threads"].toInt(), d.captured(3).toInt());
            QVERIFY(j["threads"].toInt() >= 1);
            QVERIFY(j["threads"].toInt() <= std::max(QThread::idealThreadCount(), 1));
        }
        // The table says it too.
        const Run t = run_cli({"bench", "-p", "8", "-n", "4", "-r", "1"});
        QVERIFY2(t.code == 0, t.err.constData());
        QVERIFY2(t.out.contains(("backend: " + expected + " by default (").toUtf8()),
                 t.out.constData());

        // generate the same, and info names it.
        const Run g = run_cli({"generate", "-p", "Once", "-n", "2", "--json", "--no-log"});
        QVERIFY2(g.code == 0, g.err.constData());
        // generate's "backend" is Model::backend_name(): "cpu", or the Vulkan device's name.
        const auto ran_on = [](const QString& name) -> QString {
            return name == "cpu" || name == "cpu-ref" ? name : "vulkan";
        };
        QCOMPARE(ran_on(QJsonDocument::fromJson(g.out).object()["backend"].toString()), expected);
        const Run i = run_cli({"info"});
        QVERIFY2(i.code == 0, i.err.constData());
        QVERIFY2(i.out.contains(("\nbackend:         " + expected).toUtf8()), i.out.constData());

        // batch and compare the same.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile prompts(dir.filePath("prompts.txt"));
        QVERIFY(prompts.open(QIODevice::WriteOnly));
        prompts.write("Once upon a time\n");
        prompts.close();
        const Run bt = run_cli({"batch", "--prompts", prompts.fileName(), "-n", "2", "--no-log",
                                "-o", dir.filePath("out.jsonl")});
        QVERIFY2(bt.code == 0, bt.err.constData());
        static const QRegularExpression batch_backend(QStringLiteral(", backend (.*)$"),
                                                      QRegularExpression::MultilineOption);
        const QRegularExpressionMatch bm = batch_backend.match(QString::fromUtf8(bt.err));
        QVERIFY2(bm.hasMatch(), bt.err.constData());
        QCOMPARE(ran_on(bm.captured(1)), expected);
        const QString model = kData + "/models/stories260K.gguf";
        const Run cmp = run_cli({"compare", "-m", model, "-m", model, "-n", "2", "--json", "-q"});
        QVERIFY2(cmp.code == 0, cmp.err.constData());
        const QJsonArray cmp_models = QJsonDocument::fromJson(cmp.out).object()["models"].toArray();
        QCOMPARE(cmp_models.size(), 2);
        for (const auto& m : cmp_models)
            QCOMPARE(ran_on(m.toObject()["backend"].toString()), expected);

        // An explicit choice always wins, and is not called a default (the
        // f32 reference where the build has no Vulkan backend).
        const QString other = gpu ? "cpu" : wbtest::vulkan_built() ? "vulkan" : "cpu-ref";
        const Run e =
            run_cli({"bench", "--backend", other, "-p", "8", "-n", "4", "-r", "1", "--json"});
        QVERIFY2(e.code == 0, e.err.constData());
        const QJsonObject ej = QJsonDocument::fromJson(e.out).object();
        QCOMPARE(ej["backend"].toString(), other);
        QVERIFY(!ej.contains("backend_reason"));
        const Run eg = run_cli(
            {"generate", "--backend", other, "-p", "Once", "-n", "2", "--json", "--no-log"});
        QVERIFY2(eg.code == 0, eg.err.constData());
        QCOMPARE(ran_on(QJsonDocument::fromJson(eg.out).object()["backend"].toString()), other);
    }

    void info_shows_parameter_count() {
        const Run r = run_cli({"info", kData + "/models/stories260K.gguf", "--kv-type", "f32"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(r.out.contains("parameters:      292800"));
        QVERIFY(r.out.contains("n_head_kv:       4"));
        // KV at the training context 2048, f32: 2 * 5 * 2048 * 4 * 8 * 4 bytes
        QVERIFY(r.out.contains("kv cache:        2621440 bytes"));
        // The default KV cache is f16, as llama.cpp's: half of that.
        const Run d = run_cli({"info", kData + "/models/stories260K.gguf"});
        QVERIFY2(d.out.contains("kv cache:        1310720 bytes"), d.out.constData());
        const Run c = run_cli({"info", "-c", "512", "--kv-type", "f16"});  // bundled model
        QVERIFY2(c.code == 0, c.err.constData());
        QVERIFY(c.out.contains("kv cache:        327680 bytes"));  // 2*5*512*4*8*2
    }

    // `info` says whether the engine can run the file before any memory or
    // "fits" line; for files it cannot run, it names why: an architecture
    // (stories260K with general.architecture rewritten to "mamba"), a
    // tensor type (one tensor's type id rewritten to MXFP4, which the type
    // table only knows), a tokenizer (llama.cpp's BERT vocab file, whose
    // architecture is unsupported too).
    void info_says_whether_it_can_run() {
        const QString model = kData + "/models/stories260K.gguf";
        const Run ok = run_cli({"info", model});
        QVERIFY2(ok.code == 0, ok.err.constData());
        // Every backend that can run it, the threaded CPU one included.
        QVERIFY2(ok.out.contains("can run:         yes, on --backend cpu (threaded, quantized "
                                 "kernels), cpu-ref (f32 reference) and vulkan"),
                 ok.out.constData());
        QVERIFY(ok.out.indexOf("can run:") < ok.out.indexOf("parameters:"));

        QFile src(model);
        QVERIFY(src.open(QIODevice::ReadOnly));
        const QByteArray orig = src.readAll();
        auto le = [](uint64_t v, int bytes) {
            QByteArray b;
            for (int i = 0; i < bytes; ++i) b.append(static_cast<char>((v >> (8 * i)) & 0xff));
            return b;
        };
        auto gguf_str = [&](const QByteArray& s) {
            return le(static_cast<uint64_t>(s.size()), 8) + s;
        };
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto write = [&](const QString& name, const QByteArray& bytes) {
            QFile f(dir.filePath(name));
            if (!f.open(QIODevice::WriteOnly)) return QString();
            f.write(bytes);
            return f.fileName();
        };
        auto no_fit = [](const Run& r) {
            return !r.out.contains("fits") && !r.out.contains("device memory:") &&
                   !r.out.contains("kv cache:");
        };

        // Architecture: the key's string value (type 8) "llama" -> "mamba".
        QByteArray arch = orig;
        const QByteArray key = gguf_str("general.architecture") + le(8, 4) + gguf_str("llama");
        const qsizetype at = arch.indexOf(key);
        QVERIFY(at >= 0);
        arch.replace(at + key.size() - 5, 5, "mamba");
        const Run a = run_cli({"info", write("mamba.gguf", arch)});
        QVERIFY2(a.code == 0, a.err.constData());
        QVERIFY2(a.out.contains("can run:         no, this engine cannot run it:"),
                 a.out.constData());
        QVERIFY2(a.out.contains("- architecture: unsupported architecture 'mamba'"),
                 a.out.constData());
        QVERIFY2(no_fit(a), a.out.constData());

        // Tensor type: blk.0.attn_q.weight's info is name, n_dims (u32), two
        // dims (u64 each), then the type id (u32); 39 = MXFP4 (32 values in 17
        // bytes, so the tensor's data still lies inside the file).
        QByteArray typed = orig;
        const QByteArray name = gguf_str("blk.0.attn_q.weight");
        const qsizetype t = typed.indexOf(name);
        QVERIFY(t >= 0);
        QCOMPARE(typed.mid(t + name.size(), 4), le(2, 4));
        typed.replace(t + name.size() + 4 + 16, 4, le(39, 4));
        const Run ty = run_cli({"info", write("mxfp4.gguf", typed)});
        QVERIFY2(ty.code == 0, ty.err.constData());
        QVERIFY2(ty.out.contains("can run:         no"), ty.out.constData());
        QVERIFY2(ty.out.contains("- tensor type: MXFP4 in 1 tensor (blk.0.attn_q.weight)"),
                 ty.out.constData());
        QVERIFY2(!ty.out.contains("architecture: unsupported"), ty.out.constData());
        QVERIFY2(no_fit(ty), ty.out.constData());

        // Tokenizer: BERT's WordPiece vocabulary.
        const Run b = run_cli({"info", kData + "/models/vocab/ggml-vocab-bert-bge.gguf"});
        QVERIFY2(b.code == 0, b.err.constData());
        QVERIFY2(b.out.contains("can run:         no"), b.out.constData());
        QVERIFY2(b.out.contains("- tokenizer: unsupported tokenizer model 'bert'"),
                 b.out.constData());
        QVERIFY2(no_fit(b), b.out.constData());
    }

    // `plan`: a named shape's bytes against hand-worked figures (Llama 3.1
    // 70B: 70 553 706 496 parameters; F16 matrices, f32 norms: 161 * 8192
    // values; KV f16 at 8192 tokens: 2 * 80 * 8192 * 1024 * 2), the fit
    // table, and a model file of another architecture.
    void plan_shows_what_fits() {
        WB_SKIP_WITHOUT_VULKAN();
        const Run r = run_cli(
            {"plan", "--shape", "70B", "--type", "f16", "-c", "8192", "--backend", "vulkan"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("weights:         141110050816 bytes"), r.out.constData());
        QVERIFY2(r.out.contains("kv cache:          2684354560 bytes"), r.out.constData());
        QVERIFY(QRegularExpression("80 GiB GPU +80\\.00 GiB +too big")
                    .match(QString::fromUtf8(r.out))
                    .hasMatch());
        QVERIFY(QRegularExpression("141 GiB GPU +141\\.00 GiB +fits")
                    .match(QString::fromUtf8(r.out))
                    .hasMatch());
        const Run g = run_cli(
            {"plan", kData + "/golden2/gemma2/gemma2-f16.gguf", "-c", "512", "--parallel", "2"});
        QVERIFY2(g.code == 0, g.err.constData());
        QVERIFY2(g.out.contains("(gemma2)") &&
                     g.out.contains("one pool of 512 KV cells shared by 2 sequences"),
                 g.out.constData());
        const Run bad = run_cli({"plan", "--shape", "9B"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("1B 3B 7B 8B 13B 70B"), bad.err.constData());
    }

    // `plan` predicts what `batch` allocates: -c (one pool), --parallel /
    // --concurrency and --kv-type mean the same in both, so with the same
    // flags the plan's weights and KV cache equal the engine's own
    // accounting (Model::memory_report, in batch's --summary-json) byte for
    // byte; on Vulkan the plan's activations and staging (a 512-token
    // ubatch, the peak) cover what the run allocated. The defaults agree too
    // (f16 KV, the training context per sequence). The tiny models of every
    // architecture, and a TinyLlama-1.1B-shape file from `synth`.
    void plan_equals_batch_allocation_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("backend");
        QTest::addColumn<bool>("defaults");
        for (const std::string& m : wbtest::golden2_models()) {
            if (!wbtest::vulkan_built()) break;
            QTest::newRow((m + " vulkan").c_str())
                << QString::fromStdString(wbtest::golden2_model(m)) << "vulkan" << false;
        }
        const QString stories = kData + "/models/stories260K.gguf";
        if (wbtest::vulkan_built())
            QTest::newRow("stories260K vulkan") << stories << "vulkan" << false;
        QTest::newRow("stories260K cpu") << stories << "cpu" << false;
        QTest::newRow("stories260K cpu, default -c and --kv-type") << stories << "cpu" << true;
        QTest::newRow("tinyllama-1.1b shape q4_0 cpu") << "synth"
                                                       << "cpu" << false;
    }

    void plan_equals_batch_allocation() {
        QFETCH(QString, model);
        QFETCH(QString, backend);
        QFETCH(bool, defaults);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (model == "synth") {
            model = dir.filePath("tinyllama-shape-q4_0.gguf");
            const Run s = run_cli({"synth", "--shape", "tinyllama-1.1b", "--type", "q4_0", "-q",
                                   "--threads", "2", model});
            QVERIFY2(s.code == 0, s.err.constData());
        }
        const QString prompts = dir.filePath("prompts.txt");
        {
            QFile f(prompts);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("Once upon a time\nThe cat\nA dog ran\nHello\n");
        }
        QStringList sizes = {"-c", "2048", "--kv-type", "f16"};
        if (defaults) sizes.clear();
        const Run p = run_cli(
            QStringList{"plan", model, "--parallel", "4", "--backend", backend, "--json"} + sizes);
        QVERIFY2(p.code == 0, p.err.constData());
        const QJsonObject plan = QJsonDocument::fromJson(p.out).object();
        const QString summary = dir.filePath("summary.json");
        const Run b =
            run_cli(QStringList{"batch", "-m", model, "--prompts", prompts, "--concurrency", "4",
                                "--backend", backend, "-n", "2", "--no-log", "-q", "-o",
                                dir.filePath("out.jsonl"), "--summary-json", summary} +
                    sizes);
        QVERIFY2(b.code == 0, b.err.constData());
        QFile sf(summary);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        const QJsonObject got = QJsonDocument::fromJson(sf.readAll()).object()["memory"].toObject();
        QVERIFY2(!got.isEmpty(), "batch --summary-json has no memory block");
        qInfo("plan %s", p.out.constData());
        for (const char* key : {"backend", "n_ctx", "n_parallel", "kv_type"})
            QVERIFY2(plan[key] == got[key], key);
        if (defaults) QCOMPARE(got["kv_type"].toString(), QString("f16"));
        // The bytes: integers below 2^53, exact in a JSON double.
        QCOMPARE(plan["weights"].toDouble(), got["weights"].toDouble());
        QCOMPARE(plan["kv_cache"].toDouble(), got["kv_cache"].toDouble());
        QVERIFY(got["kv_cache"].toDouble() > 0);
        QVERIFY(plan["activations"].toDouble() >= got["activations"].toDouble());
        QVERIFY(plan["staging"].toDouble() >= got["staging"].toDouble());
    }

    void bad_model_path_fails_naming_the_file() {
        const QString missing = kData + "/models/does-not-exist.gguf";
        const QList<QStringList> cmds = {{"generate", "-m", missing, "-p", "hi"},
                                         {"tokenize", "-m", missing, "-p", "hi"},
                                         {"info", missing}};
        for (const QStringList& args : cmds) {
            const Run r = run_cli(args);
            QVERIFY(r.code != 0);
            QVERIFY2(r.err.contains("does-not-exist.gguf"), r.err.constData());
        }
    }

    void broken_file_fails_naming_the_file() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile src(kData + "/models/stories260K.gguf");
        QVERIFY(src.open(QIODevice::ReadOnly));
        const QString path = dir.filePath("truncated.gguf");
        QFile dst(path);
        QVERIFY(dst.open(QIODevice::WriteOnly));
        dst.write(src.read(20000));  // header and tensor infos, data cut off
        dst.close();
        const Run r = run_cli({"generate", "-m", path, "-p", "Once", "-n", "4"});
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.contains("truncated.gguf"), r.err.constData());
        // A vocab-only file has no weights: tokenize works, generate says why not.
        const QString vocab = kData + "/models/vocab/ggml-vocab-llama-spm.gguf";
        QCOMPARE(run_cli({"tokenize", "-m", vocab, "-p", "Hello world"}).code, 0);
        const Run g = run_cli({"generate", "-m", vocab, "-p", "Hello"});
        QVERIFY(g.code != 0);
        QVERIFY2(g.err.contains("token_embd.weight"), g.err.constData());
    }

    void usage_errors_and_help() {
        const Run bad = run_cli({"generate", "--bogus"});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains("--bogus"));
        QCOMPARE(run_cli({"generate", "-p", "x", "-n", "lots"}).code, 2);
        QCOMPARE(run_cli({"nosuchcommand"}).code, 2);
        const Run help = run_cli({"--help"});
        QCOMPARE(help.code, 0);
        for (const char* cmd : {"info", "generate", "tokenize"}) {
            QVERIFY(help.out.contains(cmd));
            const Run h = run_cli({cmd, "--help"});
            QCOMPARE(h.code, 0);
            QVERIFY(h.out.startsWith("Usage: workbench-cli " + QByteArray(cmd)));
        }
        const Run v = run_cli({"--version"});
        QCOMPARE(v.code, 0);
        QVERIFY(v.out.startsWith("workbench-cli 0."));
        QVERIFY(v.out.contains("git"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
