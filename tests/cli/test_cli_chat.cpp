// workbench-cli's chat commands as a user runs them (QProcess on the built
// binary): chat-template (JSON messages on stdin), generate --chat and
// tokenize on byte-level BPE vocabularies. Expected prompts and ids are
// llama.cpp's `chat` golden records of the tiny Llama-3.2 and Qwen2.5
// models (tests/data/golden2/<model>/goldens) and its tokenizer golden
// records; template renderings are Python Jinja2's (tests/data/chat/expected).

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "common/gguf_set_string.h"
#include "common/hostile_templates.h"
#include "common/json_fixtures.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());

using Run = wbtest::ProcessResult;

Run run_cli(const QStringList& args, const QByteArray& input = {}) {
    return wbtest::run_process(kCli, args, 300000, input);
}

QJsonObject chat_record(const QString& model) {
    const QJsonObject doc = wbtest::read_json(
        (kData + "/golden2/" + model + "/goldens/f16.llamacpp.kvf32.json").toStdString());
    for (const QJsonValue& r : doc["results"].toArray()) {
        if (r.toObject()["name"].toString() == "chat") return r.toObject();
    }
    qFatal("no chat record");
}

QString ids_line(const QJsonArray& a) {
    QStringList s;
    for (const auto& v : a) s << QString::number(v.toInt());
    return s.join(' ');
}

const QString kRepro = kData + "/repro/templates-and-limits/";

QByteArray messages_json() {
    QFile f(kRepro + "messages.json");
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString model_path(const QString& m) {
    return kData + "/golden2/" + m + "/" + m + "-f16.gguf";
}

}  // namespace

class TestCliChat : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }

    void chatTemplateOfAModelGivesLlamaCppPrompt_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("llama3") << "llama3";
        QTest::newRow("qwen2") << "qwen2";
    }

    void chatTemplateOfAModelGivesLlamaCppPrompt() {
        QFETCH(QString, model);
        const QJsonObject rec = chat_record(model);
        const QByteArray stdin_json = QJsonDocument(rec["messages"].toArray()).toJson();
        const Run r = run_cli(
            {"chat-template", model_path(model), "--ids", "--chat-var", "date_string=26 Jul 2024"},
            stdin_json);
        QVERIFY2(r.code == 0, r.err.constData());
        const QString out = QString::fromUtf8(r.out);
        const QString rendered = rec["rendered"].toString();
        QVERIFY2(out.startsWith(rendered), qPrintable(out));
        QCOMPARE(out.mid(rendered.size()), "\n" + ids_line(rec["prompt_ids"].toArray()) + "\n");
        QVERIFY2(r.err.contains("chat template: model (sha256 "), r.err.constData());
    }

    void chatTemplateOfAFileMatchesJinja2() {
        // Qwen2.5's template, 3 turns after a system message, generation
        // prompt on (Python Jinja2's rendering in expected/).
        const QJsonObject doc = wbtest::read_json(
            (kData + "/chat/expected/Qwen-Qwen2.5-7B-Instruct.json").toStdString());
        const QJsonArray messages = doc["conversations"].toObject()["system_user3"].toArray();
        QString want;
        for (const QJsonValue& c : doc["cases"].toArray()) {
            const QJsonObject o = c.toObject();
            if (o["conversation"].toString() == "system_user3" &&
                o["add_generation_prompt"].toBool()) {
                want = o["output"].toString();
            }
        }
        QVERIFY(!want.isEmpty());
        const QJsonObject in{{"messages", messages}};
        const Run r =
            run_cli({"chat-template", kData + "/chat/templates/Qwen-Qwen2.5-7B-Instruct.jinja"},
                    QJsonDocument(in).toJson());
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(QString::fromUtf8(r.out), want);
        // Without the generation prompt the assistant header is gone.
        const Run no_agp =
            run_cli({"chat-template", kData + "/chat/templates/Qwen-Qwen2.5-7B-Instruct.jinja",
                     "--no-generation-prompt"},
                    QJsonDocument(in).toJson());
        QVERIFY(!QString::fromUtf8(no_agp.out).endsWith("<|im_start|>assistant\n"));
    }

    void chatTemplateErrors() {
        // The template's own refusal, with its file and line.
        const Run sys =
            run_cli({"chat-template", kData + "/chat/templates/google-gemma-2-2b-it.jinja"},
                    R"([{"role": "system", "content": "x"}, {"role": "user", "content": "y"}])");
        QCOMPARE(sys.code, 1);
        QVERIFY2(sys.err.contains("google-gemma-2-2b-it.jinja:1: System role not supported"),
                 sys.err.constData());
        // Not JSON / not messages: usage errors.
        QCOMPARE(run_cli({"chat-template", model_path("qwen2")}, "not json").code, 2);
        const Run bad =
            run_cli({"chat-template", model_path("qwen2")}, R"([{"content": "no role"}])");
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("message 0 needs a string \"role\""), bad.err.constData());
        // A built-in format instead of the model's template.
        const Run chatml =
            run_cli({"chat-template", model_path("llama3"), "--chat-format", "chatml"},
                    R"([{"role": "user", "content": "hi"}])");
        QVERIFY2(chatml.code == 0, chatml.err.constData());
        QCOMPARE(QString::fromUtf8(chatml.out),
                 QString("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
    }

    // The hostile templates of tests/data/repro/templates-and-limits as
    // template files: an error naming the file, line 1 and the limit, exit
    // code 1, never a signal.
    void hostileTemplateFilesEndInALimitError_data() { wbtest::add_hostile_template_rows(); }
    void hostileTemplateFilesEndInALimitError() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        const QString path = kRepro + file;
        const Run r = run_cli({"chat-template", path}, messages_json());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains((path + ":1: ").toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains(says.toUtf8()), r.err.constData());
    }

    // The same templates inside a model (stories260K with its
    // tokenizer.chat_template set): chat-template and generate --chat say
    // why the model's template is not used, naming the file and the limit,
    // and go on with the built-in Llama 2 format.
    void hostileTemplatesInAModelFallBackWithAReason_data() {
        hostileTemplateFilesEndInALimitError_data();
    }
    void hostileTemplatesInAModelFallBackWithAReason() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString model = dir.filePath("hostile.gguf");
        QFile src(kRepro + file);
        QVERIFY(src.open(QIODevice::ReadOnly));
        wbtest::gguf_set_string((kData + "/models/stories260K.gguf").toStdString(),
                                model.toStdString(), "tokenizer.chat_template",
                                src.readAll().toStdString());
        const Run r = run_cli({"chat-template", model}, messages_json());
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.err.contains((model + ": the model's chat template cannot be used").toUtf8()),
                 r.err.constData());
        QVERIFY2(r.err.contains(says.toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains("using the built-in Llama 2 format"), r.err.constData());
        QVERIFY2(r.out.contains("[INST]"), r.out.constData());

        const Run g = run_cli({"generate", "-m", model, "--chat", "--user", "Hi", "-n", "2",
                               "--temp", "0", "--backend", "cpu", "--no-log"});
        QVERIFY2(g.code == 0, g.err.constData());
        QVERIFY2(g.err.contains(says.toUtf8()), g.err.constData());
    }

    // A template that renders one turn (the probe at open) but hits a
    // limit on a longer conversation: that request fails with an error
    // naming the model file, the template line and the limit; no signal.
    void limitHitByALaterConversationNamesModelAndLine() {
        QTemporaryDir dir;
        const QString model = dir.filePath("late.gguf");
        wbtest::gguf_set_string(
            (kData + "/models/stories260K.gguf").toStdString(), model.toStdString(),
            "tokenizer.chat_template",
            "{% for m in messages %}{{ m.content }}\n{% endfor %}\n"
            "{% if messages|length > 1 %}{{ 'a'|center(1000000000) }}{% endif %}");
        const Run one = run_cli({"generate", "-m", model, "--chat", "--user", "Hi", "-n", "2",
                                 "--temp", "0", "--backend", "cpu", "--no-log"});
        QVERIFY2(one.code == 0, one.err.constData());
        QVERIFY2(!one.err.contains("cannot be used"), one.err.constData());
        const Run two =
            run_cli({"generate", "-m", model, "--chat", "--user", "Hi", "--assistant", "Hello",
                     "--user", "Bye", "-n", "2", "--temp", "0", "--backend", "cpu", "--no-log"});
        QCOMPARE(two.code, 1);
        QVERIFY2(two.err.contains(model.toUtf8()), two.err.constData());
        QVERIFY2(two.err.contains("model:3: "), two.err.constData());
        QVERIFY2(two.err.contains("memory budget"), two.err.constData());
    }

    // Messages nested 120k deep on stdin: refused before parsing, with the
    // line and column of the bracket that opens level 257 (exit code 2).
    void deepMessagesAreRefusedWithLineAndColumn() {
        QFile f(kRepro + "deep-messages-120k.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const Run r = run_cli({"chat-template", model_path("qwen2")}, f.readAll());
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("stdin: line 1, column 257: JSON nests deeper than 256"),
                 r.err.constData());
        // And in a --chat-var value.
        const Run v =
            run_cli({"chat-template", model_path("qwen2"), "--chat-var", "x=" + QString(300, '[')},
                    R"([{"role": "user", "content": "y"}])");
        QCOMPARE(v.code, 2);
        QVERIFY2(v.err.contains("--chat-var x: line 1, column 257"), v.err.constData());
    }

    void generateChatUsesTheTemplate() {
        // The conversation of llama.cpp's chat record, given as turns in
        // order; the prompt ids must be llama.cpp's.
        const QJsonObject rec = chat_record("llama3");
        QStringList args = {"generate",
                            "-m",
                            model_path("llama3"),
                            "--chat",
                            "--backend",
                            "cpu",
                            "-n",
                            "2",
                            "--temp",
                            "0",
                            "--no-log",
                            "--json",
                            "--chat-var",
                            "date_string=26 Jul 2024"};
        for (const QJsonValue& m : rec["messages"].toArray()) {
            args << "--" + m.toObject()["role"].toString() << m.toObject()["content"].toString();
        }
        const Run r = run_cli(args);
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["prompt_token_ids"].toArray(), rec["prompt_ids"].toArray());
        QCOMPARE(j["prompt"].toString(), rec["rendered"].toString());
        const QJsonObject chat = j["chat"].toObject();
        QCOMPARE(chat["chat_template"].toString(), QString("model"));
        QCOMPARE(chat["chat_template_sha256"].toString().size(), 64);
        QCOMPARE(chat["pre_tokenizer"].toString(), QString("llama3"));
        QCOMPARE(chat["add_bos"].toBool(), true);
        QCOMPARE(chat["parse_special"].toBool(), true);
        // The first greedy token is llama.cpp's too (later ones depend on
        // the engine's Llama-3 RoPE scaling, not on the prompt).
        QCOMPARE(j["generated_token_ids"].toArray().first().toInt(),
                 rec["generated_ids"].toArray().first().toInt());
        // Turn options need --chat.
        QCOMPARE(run_cli({"generate", "-m", model_path("llama3"), "--user", "hi"}).code, 2);
    }

    // A model without tokenizer.chat_template (stories260K): generate --chat
    // completes plain text and says so; --chat-format picks a format.
    void generateChatWithoutATemplateIsPlainTextUnlessPicked() {
        const QString model = kData + "/models/stories260K.gguf";
        const QStringList common = {"generate", "-m", model, "--chat", "--system", "S",
                                    "--user",   "U",  "-n",  "0",      "--json",   "--no-log"};
        const Run r = run_cli(common);
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.err.contains(("note: no chat template in " + model +
                                 ": plain text completion; pick a format with --chat-format NAME")
                                    .toUtf8()),
                 r.err.constData());
        QCOMPARE(QJsonDocument::fromJson(r.out).object()["prompt"].toString(), QString("S\nU"));
        const Run picked = run_cli(common + QStringList{"--chat-format", "llama2"});
        QVERIFY2(picked.code == 0, picked.err.constData());
        QVERIFY2(!picked.err.contains("no chat template"), picked.err.constData());
        QVERIFY2(
            QJsonDocument::fromJson(picked.out).object()["prompt"].toString().contains("[INST]"),
            picked.out.constData());
        // chat-template, the third surface of the same rule.
        const Run t = run_cli({"chat-template", model}, R"([{"role": "user", "content": "U"}])");
        QVERIFY2(t.code == 0, t.err.constData());
        QCOMPARE(QString::fromUtf8(t.out), QString("U"));
        QVERIFY2(t.err.contains("no chat template in"), t.err.constData());
    }

    void tokenizeBpe() {
        // llama.cpp's golden record hard_llama3_specials for the Llama-3.2
        // vocabulary, with special text parsed: <|begin_of_text|> ... <|eot_id|>.
        const std::vector<QJsonObject> recs = wbtest::read_jsonl(
            (kData + "/golden2/tokenizer/vocab-llama-bpe-llama3.2.jsonl").toStdString());
        const QString vocab = kData + "/models/vocab-derived/vocab-llama-bpe-llama3.2.gguf";
        int checked = 0;
        for (const QJsonObject& rec : recs) {
            if (rec["name"].toString() != "hard_llama3_specials" &&
                rec["name"].toString() != "hard_contractions")
                continue;
            const Run plain =
                run_cli({"tokenize", "-m", vocab, "-p", rec["text"].toString(), "--no-bos"});
            QVERIFY2(plain.code == 0, plain.err.constData());
            QCOMPARE(QString::fromUtf8(plain.out).trimmed(), ids_line(rec["ids"].toArray()));
            const Run special =
                run_cli({"tokenize", "-m", vocab, "-p", rec["text"].toString(), "--parse-special"});
            QCOMPARE(QString::fromUtf8(special.out).trimmed(),
                     ids_line(rec["ids_add_special_parse_special"].toArray()));
            ++checked;
        }
        QCOMPARE(checked, 2);
        const Run pieces = run_cli({"tokenize", "-m", vocab, "-p", "Hello world", "--pieces"});
        QCOMPARE(QString::fromUtf8(pieces.out),
                 QString("128000\t\"<|begin_of_text|>\"\n9906\t\"Hello\"\n1917\t\" world\"\n"));
    }
};

QTEST_GUILESS_MAIN(TestCliChat)
#include "test_cli_chat.moc"
