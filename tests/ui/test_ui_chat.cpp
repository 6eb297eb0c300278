// The Chat tab with a real chat model: golden2's tiny Qwen2.5 (random
// weights, the Qwen2.5 BPE vocabulary and the Qwen2.5-7B-Instruct chat
// template) through the real bridge and engine (Vulkan on the default
// device, lavapipe here). Expected values come from outside the app:
// llama.cpp's prompt ids and first greedy token for the same conversation
// (golden2 qwen2 `chat` record), Python Jinja2's renderings of the same
// template (tests/data/chat/chat_template_goldens.json), hand-worked
// ChatML, and the vocabulary's own <|im_end|> id as llama.cpp tokenized it.

#include <QClipboard>
#include <QComboBox>
#include <QCryptographicHash>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextCursor>
#include <QUrl>
#include <QtTest>
#include <memory>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "desktop/engine_bridge.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "ui/chat_view.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kModel = kData + "/golden2/qwen2/qwen2-f16.gguf";

QJsonObject read_json(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

/// llama.cpp's record of the `chat` prompt for the tiny Qwen2.5.
QJsonObject llama_chat_record() {
    const QJsonObject g = read_json(kData + "/golden2/qwen2/goldens/f16.dequantf32.kvf32.json");
    for (const QJsonValue& r : g["results"].toArray())
        if (r.toObject()["name"].toString() == "chat") return r.toObject();
    return {};
}

std::vector<int32_t> ids_of(const QJsonArray& a) {
    std::vector<int32_t> out;
    for (const QJsonValue& v : a) out.push_back(v.toInt());
    return out;
}

QList<ui::ChatTurn> turns_of(const QJsonArray& messages) {
    QList<ui::ChatTurn> out;
    for (const QJsonValue& v : messages) {
        const QJsonObject m = v.toObject();
        out.append({m["role"].toString() == "user", m["content"].toString(), {}, {}, {}});
    }
    return out;
}

/// Waits for the reply `send` starts; returns its result (empty id on failure).
template <class F>
gui::RequestResult reply_to(ui::ChatView& chat, F send) {
    QSignalSpy done(&chat, &ui::ChatView::replyFinished);
    if (!send()) return {};
    if (!QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000)) return {};
    return done.first().first().value<gui::RequestResult>();
}

}  // namespace

class UiChat : public QObject {
    Q_OBJECT
    std::unique_ptr<gui::EngineBridge> bridge_;
    gui::GenSettings s_;

  private slots:
    void initTestCase() {
        QVERIFY2(QFile::exists(kModel), qPrintable(kModel));
        bridge_ = std::make_unique<gui::EngineBridge>();
        QSignalSpy loaded(bridge_.get(), &gui::EngineBridge::modelLoaded);
        QSignalSpy failed(bridge_.get(), &gui::EngineBridge::modelLoadFailed);
        gui::LoadRequest req;
        req.path = kModel;
        req.backend = "vulkan";
        req.n_ctx = 1024;
        req.n_parallel = 2;
        bridge_->loadModel(req);
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000));
        QVERIFY2(!loaded.isEmpty(),
                 failed.isEmpty()
                     ? "no load signal"
                     : qPrintable(failed.first().first().value<gui::UserError>().what));
        qInfo() << "backend:" << bridge_->backendName();
        s_.temperature = 0;
        s_.max_tokens = 4;
    }

    // The model's own template is the default and is shown with its
    // source; the prompt of llama.cpp's chat record has llama.cpp's ids,
    // the meter counts them, they are what goes to the engine, and the
    // engine's first greedy token after them is llama.cpp's.
    void promptIdsEqualLlamaCpp() {
        const QJsonObject rec = llama_chat_record();
        QVERIFY(!rec.isEmpty());
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        QCOMPARE(chat.templateBox()->currentData().toString(), QString("model"));
        QVERIFY2(chat.templateInfo()->text().contains("tokenizer.chat_template"),
                 qPrintable(chat.templateInfo()->text()));
        QVERIFY(chat.conversation().usesTemplate());

        // user / assistant / user: the first two as history, the last typed.
        const QList<ui::ChatTurn> turns = turns_of(rec["messages"].toArray());
        QCOMPARE(turns.size(), 3);
        chat.conversation().turns() = turns.mid(0, 2);
        chat.refresh();
        chat.input()->setPlainText(turns[2].text);
        const ui::ChatPromptText p = chat.pendingPrompt();
        QCOMPARE(p.error, QString());
        QCOMPARE(p.text, rec["rendered"].toString());
        const std::vector<int32_t> want = ids_of(rec["prompt_ids"].toArray());
        QCOMPARE(p.ids, want);
        QTRY_VERIFY2(chat.meterLabel()->text().startsWith(
                         // Counted against the model's 512-token training context
                         // (qwen2.context_length), not the 1024-token pool.
                         QString("Prompt %1 / 512 tokens").arg(want.size())),
                     qPrintable(chat.meterLabel()->text()));

        QSignalSpy done(&chat, &ui::ChatView::replyFinished);
        QTest::keyClick(chat.input(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000));
        const auto r = done.first().first().value<gui::RequestResult>();
        // llama.cpp's next greedy token, <|fim_pad|> (its "generated_text"),
        // is an end-of-generation token in llama.cpp's vocabulary rules.
        QVERIFY2(r.finish_reason == "length" || r.finish_reason == "stop",
                 qPrintable(r.finish_reason + " " + r.error));
        QCOMPARE(r.prompt_tokens, static_cast<int>(want.size()));
        QCOMPARE(chat.lastSentPrompt().ids, want);
        QCOMPARE(r.prompt, rec["rendered"].toString());
        QCOMPARE(r.prompt_format["chat_template"].toString(), QString("model"));
        QCOMPARE(r.prompt_format["pre_tokenizer"].toString(), QString("qwen2"));
        QCOMPARE(r.prompt_format["parse_special"].toBool(), true);
        QCOMPARE(r.prompt_format["chat_template_sha256"].toString().size(), 64);
        QCOMPARE(r.token_ids.first(), rec["generated_ids"].toArray().first().toInt());
        QCOMPARE(chat.turns().size(), 4);
        QVERIFY(chat.input()->toPlainText().isEmpty());
    }

    // While a reply streams it has no Copy / Regenerate links: tokens go
    // into its body as plain text (they were appended after the links,
    // blue and underlined, until the reply ended). send() draws the
    // transcript before returning, so this is checked before any token.
    void streamingReplyIsPlainTextBeforeItsLinks() {
        gui::GenSettings s = s_;
        s.max_tokens = 6;
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s; });
        QSignalSpy done(&chat, &ui::ChatView::replyFinished);
        QVERIFY(chat.send("Hello"));
        QVERIFY(chat.isStreaming());
        QCOMPARE(chat.transcript()->toPlainText().count("Regenerate"), 0);
        QTextCursor end(chat.transcript()->document());
        end.movePosition(QTextCursor::End);
        QVERIFY(!end.charFormat().isAnchor());
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000));
        const QString after = chat.transcript()->toPlainText();
        QCOMPARE(after.count("Regenerate"), 1);
        const QString reply = chat.turns().last().text;
        QVERIFY2(reply.isEmpty() || after.indexOf(reply.trimmed()) < after.indexOf("Regenerate"),
                 qPrintable(after));
    }

    // A system prompt replaces the template's default system block exactly
    // as Jinja2 renders it; built-in formats and plain text can be picked.
    void systemPromptAndTemplateChoice() {
        const QJsonObject g = read_json(kData + "/chat/chat_template_goldens.json");
        QString with_system, no_system;
        for (const QJsonValue& v : g["cases"].toArray()) {
            const QJsonObject c = v.toObject();
            if (c["name"].toString() != "qwen2.5-7b-instruct" ||
                !c["add_generation_prompt"].toBool())
                continue;
            (c["conversation"].toString() == "with_system" ? with_system : no_system) =
                c["output"].toString();
        }
        QVERIFY(!with_system.isEmpty() && !no_system.isEmpty());
        // Those renderings are of the Qwen2.5-7B-Instruct template: the
        // tiny model must carry that very template for them to apply.
        QFile jinja(kData + "/chat/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
        QVERIFY(jinja.open(QIODevice::ReadOnly));
        const std::string src = bridge_->chatTemplate().value_or("");
        QCOMPARE(QString::fromStdString(src).trimmed(),
                 QString::fromUtf8(jinja.readAll()).trimmed());

        QTemporaryDir dir;
        gui::SettingsStore store(dir.filePath("settings.ini"));
        const QJsonArray msgs = g["messages_with_system"].toArray();
        {
            ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
            chat.setStore(&store);
            QList<ui::ChatTurn> turns = turns_of(msgs);
            const QString last = turns.takeLast().text;  // "Another question", typed
            QCOMPARE(turns.takeFirst().text, QString("You are a helpful assistant"));
            chat.conversation().turns() = turns;
            chat.refresh();
            chat.input()->setPlainText(last);
            QCOMPARE(chat.pendingPrompt().text, no_system);
            chat.systemPromptEdit()->setPlainText("You are a helpful assistant");
            QCOMPARE(chat.pendingPrompt().text, with_system);

            // Built-in ChatML, hand-worked: no default system block.
            chat.conversation().turns().clear();
            chat.input()->setPlainText("Hi");
            QVERIFY(chat.setTemplate("chatml"));
            QVERIFY2(chat.templateInfo()->text().contains("built-in ChatML"),
                     qPrintable(chat.templateInfo()->text()));
            QCOMPARE(chat.pendingPrompt().text,
                     QString("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                             "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
            // Plain text: system prompt, then the message.
            QVERIFY(chat.setTemplate("none"));
            QCOMPARE(chat.pendingPrompt().text, QString("You are a helpful assistant\nHi"));
            QVERIFY(!chat.setTemplate("no-such-format"));
            QVERIFY(chat.setTemplate("chatml"));
        }
        // Kept per model file: a new view on the same store has both.
        ui::ChatView again(bridge_.get(), nullptr, [&] { return s_; });
        again.setStore(&store);
        QCOMPARE(again.systemPromptEdit()->toPlainText(), QString("You are a helpful assistant"));
        QCOMPARE(again.templateBox()->currentData().toString(), QString("chatml"));
    }

    // Edit a user message (its link in the transcript), resend: the turns
    // after it are gone and the prompt sent holds the edited text only.
    // Regenerating an earlier reply drops the turns after it too.
    void editAndResendDropsLaterTurns() {
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        for (const char* m : {"one", "two", "three"}) {
            const auto r = reply_to(chat, [&] { return chat.send(m); });
            QVERIFY2(r.finish_reason == "length", qPrintable(r.finish_reason + " " + r.error));
        }
        QCOMPARE(chat.turns().size(), 6);
        const ui::ChatTurn first_reply = chat.turns()[1];

        emit chat.transcript()->anchorClicked(QUrl("edit:2"));
        QCOMPARE(chat.editingIndex(), 2);
        QCOMPARE(chat.input()->toPlainText(), QString("two"));
        chat.input()->setPlainText("TWO, edited");
        QSignalSpy done(&chat, &ui::ChatView::replyFinished);
        QTest::keyClick(chat.input(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000));
        const auto r = done.first().first().value<gui::RequestResult>();
        QCOMPARE(chat.editingIndex(), -1);
        QCOMPARE(chat.turns().size(), 4);
        QCOMPARE(chat.turns()[0].text, QString("one"));
        QCOMPARE(chat.turns()[1].text, first_reply.text);
        QCOMPARE(chat.turns()[2].text, QString("TWO, edited"));
        // What was sent: the template's rendering of one / reply / edited.
        QVERIFY2(
            r.prompt.contains("<|im_start|>user\nTWO, edited<|im_end|>\n<|im_start|>assistant\n"),
            qPrintable(r.prompt));
        QVERIFY(r.prompt.endsWith("TWO, edited<|im_end|>\n<|im_start|>assistant\n"));
        QVERIFY(!r.prompt.contains("three"));
        QVERIFY(!r.prompt.contains("user\ntwo<"));

        // Regenerate the first reply: a new seed, one exchange left.
        QVERIFY(chat.turns()[1].footer.size() > 0);
        const auto again = reply_to(chat, [&] { return chat.regenerateAt(1); });
        QVERIFY2(again.finish_reason == "length", qPrintable(again.error));
        QCOMPARE(chat.turns().size(), 2);
        QCOMPARE(chat.turns()[0].text, QString("one"));
        QVERIFY(!again.prompt.contains("TWO"));

        // Copy a message from its link.
        emit chat.transcript()->anchorClicked(QUrl("copy:0"));
        QCOMPARE(QGuiApplication::clipboard()->text(), QString("one"));
    }

    // The preview's rendering is what runs: a spec carrying the session's
    // prepared request (the meter's) runs its text and ids, not a second
    // rendering of the spec's messages, with the spec's settings; the Chat
    // tab sends the very rendering its meter counted.
    void sendRunsThePreview() {
        core::GenerationRequest shown;
        shown.messages = {{"user", "Hello there"}};
        shown.chat_template = "chatml";
        const auto prepared =
            std::make_shared<const core::PreparedRequest>(bridge_->session()->prepare(shown));
        QVERIFY(prepared->ok());
        gui::RequestSpec spec;
        spec.id = "preview-1";
        spec.messages = {{"user", "Something else entirely"}};
        spec.chat_template = "model";
        spec.prepared = prepared;
        spec.settings = s_;
        QSignalSpy done(bridge_.get(), &gui::EngineBridge::requestFinished);
        QVERIFY(bridge_->submit(spec));
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000));
        const auto r = done.first().first().value<gui::RequestResult>();
        QCOMPARE(r.prompt, QString::fromStdString(prepared->prompt()));
        QCOMPARE(r.prompt_tokens, static_cast<int>(prepared->prompt_tokens().size()));
        QCOMPARE(r.prompt_format["chat_template"].toString(), QString("chatml"));
        QVERIFY(r.generated_tokens <= s_.max_tokens);

        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        chat.input()->setPlainText("Hi");
        const ui::ChatPromptText meter = chat.pendingPrompt();
        QVERIFY(meter.prepared);
        const auto sent = reply_to(chat, [&] { return chat.send("Hi"); });
        QVERIFY(chat.lastSentPrompt().prepared);
        QCOMPARE(chat.lastSentPrompt().prepared->prompt_tokens(), meter.ids);
        QCOMPARE(sent.prompt_tokens, meter.tokens());
        QCOMPARE(sent.prompt, meter.text);
    }

    // Every chat response's run-log row says how its prompt became ids:
    // prompt mode, the template's name and SHA-256 (of the template text,
    // hashed here from the published file), add_bos, the pre-tokenizer and
    // parse_special. Read back with raw SQLite.
    void runLogRecordsTemplate() {
        QTemporaryDir dir;
        gui::RunRecorder rec;
        QString notice;
        QVERIFY2(rec.open(dir.filePath("runlog.sqlite"), &notice), qPrintable(notice));
        // The bridge logs every request with a run id through the recorder.
        bridge_->setRecorder(&rec);
        ui::ChatView chat(bridge_.get(), &rec, [&] { return s_; });
        const auto r = reply_to(chat, [&] { return chat.send("Hello"); });
        bridge_->setRecorder(nullptr);
        QVERIFY(!r.id.isEmpty());
        chat.endRun();
        rec.waitForIdle();
        QCOMPARE(rec.loggedCount(), qint64(1));

        QFile jinja(kData + "/chat/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
        QVERIFY(jinja.open(QIODevice::ReadOnly));
        const QByteArray sha =
            QCryptographicHash::hash(jinja.readAll(), QCryptographicHash::Sha256).toHex();
        const wbtest::RawSqlite db(dir.filePath("runlog.sqlite"));
        const auto rows = db.rows("SELECT settings, prompt, prompt_tokens FROM responses");
        QCOMPARE(rows.size(), size_t(1));
        const QJsonObject set =
            QJsonDocument::fromJson(QByteArray::fromStdString(rows[0][0])).object();
        QCOMPARE(set["prompt_mode"].toString(), QString("chat"));
        QCOMPARE(set["chat_template"].toString(), QString("model"));
        QCOMPARE(set["chat_template_sha256"].toString(), QString::fromLatin1(sha));
        QCOMPARE(set["add_bos"].toBool(), false);  // llama.cpp's ids start with <|im_start|>
        QCOMPARE(set["pre_tokenizer"].toString(), QString("qwen2"));
        QCOMPARE(set["parse_special"].toBool(), true);
        QVERIFY(QString::fromStdString(rows[0][1]).startsWith("<|im_start|>system\n"));
        QCOMPARE(std::stoi(rows[0][2]), r.prompt_tokens);
    }

    // The chat's run and its rows agree about the seed policy the chat
    // uses: an unfixed seed is "random" in both (each reply draws one), a
    // fixed one is "fixed" with the panel's seed, and Regenerate (always a
    // new seed) is "random" even then. Read back with raw SQLite.
    void runLogSeedPolicyAgrees() {
        QTemporaryDir dir;
        gui::RunRecorder rec;
        QString notice;
        QVERIFY2(rec.open(dir.filePath("runlog.sqlite"), &notice), qPrintable(notice));
        bridge_->setRecorder(&rec);
        gui::GenSettings s = s_;
        s.seed = 1234;
        s.fixed_seed = false;
        {
            ui::ChatView chat(bridge_.get(), &rec, [&] { return s; });
            QVERIFY(!reply_to(chat, [&] { return chat.send("Hello"); }).id.isEmpty());
            chat.endRun();
        }
        s.fixed_seed = true;
        {
            ui::ChatView chat(bridge_.get(), &rec, [&] { return s; });
            QVERIFY(!reply_to(chat, [&] { return chat.send("Hello"); }).id.isEmpty());
            QVERIFY(!reply_to(chat, [&] {
                         chat.regenerate();
                         return chat.isStreaming();
                     }).id.isEmpty());
            chat.endRun();
        }
        bridge_->setRecorder(nullptr);
        rec.waitForIdle();

        const wbtest::RawSqlite db(dir.filePath("runlog.sqlite"));
        const auto runs = db.rows("SELECT id, settings FROM runs ORDER BY id");
        QCOMPARE(runs.size(), size_t(2));
        auto json = [](const std::string& t) {
            return QJsonDocument::fromJson(QByteArray::fromStdString(t)).object();
        };
        auto rows_of = [&](const std::string& run) {
            return db.rows("SELECT settings FROM responses WHERE run_id = " + run + " ORDER BY id");
        };
        const QJsonObject random_run = json(runs[0][1]);
        QCOMPARE(random_run["fixed_seed"].toBool(), false);
        QCOMPARE(random_run["seed_policy"].toString(), QString("random"));
        const auto random_rows = rows_of(runs[0][0]);
        QCOMPARE(random_rows.size(), size_t(1));
        QCOMPARE(json(random_rows[0][0])["seed_policy"].toString(), QString("random"));

        const QJsonObject fixed_run = json(runs[1][1]);
        QCOMPARE(fixed_run["fixed_seed"].toBool(), true);
        QCOMPARE(fixed_run["seed_policy"].toString(), QString("fixed"));
        const auto fixed_rows = rows_of(runs[1][0]);
        QCOMPARE(fixed_rows.size(), size_t(2));
        QCOMPARE(json(fixed_rows[0][0])["seed_policy"].toString(), QString("fixed"));
        QCOMPARE(json(fixed_rows[0][0])["seed"].toInteger(), qint64(1234));
        QCOMPARE(json(fixed_rows[1][0])["seed_policy"].toString(), QString("random"));
    }

    // A reply that stopped at max tokens says to raise Max tokens, not to
    // regenerate (which would stop at the same limit).
    void maxTokensStopSaysRaiseTheLimit() {
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        const auto r = reply_to(chat, [&] { return chat.send("Hello"); });
        QCOMPARE(r.finish_reason, QString("length"));
        const QString status = chat.statusLabel()->text();
        QVERIFY2(status.contains("raise Max tokens in the settings"), qPrintable(status));
        QVERIFY2(status.contains(QString::number(s_.max_tokens)), qPrintable(status));
        QVERIFY2(!status.contains("regenerate", Qt::CaseInsensitive), qPrintable(status));
    }

    // Generation ends at the model's end-of-turn token, which is neither in
    // the reply's tokens nor in its text. golden2's record never picks
    // <|im_end|> greedily, so a logit bias forces it: the other special
    // tokens (ids 2048 and up in golden2's truncated vocabularies, README
    // "Vocabularies") are banned, and <|im_end|> gets the largest bias that
    // does not yet win the first step (bisected), so it wins a later one.
    void stopsAtEndOfTurn() {
        // <|im_end|>'s id as llama.cpp tokenized the chat prompt: the token
        // after the first message's text ("...assistant.<|im_end|>\n").
        const QJsonObject rec = llama_chat_record();
        const QString rendered = rec["rendered"].toString();
        QVERIFY(rendered.contains("assistant.<|im_end|>\n<|im_start|>user"));
        const std::vector<int32_t> ids = ids_of(rec["prompt_ids"].toArray());
        const int im_start = ids[0];
        int im_end = -1;
        for (size_t i = 1; i < ids.size(); ++i)
            if (ids[i] == im_start) {  // the second <|im_start|>: "<|im_end|>\n" before it
                im_end = ids[i - 2];
                break;
            }
        QVERIFY(im_end >= 2048);
        const int n_vocab = 2070;  // golden2 README: the Qwen2.5 set, 2070 tokens

        gui::GenSettings s = s_;
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s; });
        auto run = [&](double bias, int max_tokens) {
            s.max_tokens = max_tokens;
            s.logit_bias.clear();
            for (int id = 2048; id < n_vocab; ++id) s.logit_bias.insert(id, -1000.0);
            s.logit_bias.insert(im_end, bias);
            chat.newChat();
            return reply_to(chat, [&] { return chat.send("Hi there!"); });
        };
        // Bisect the bias at which <|im_end|> is the first token.
        double lo = 0, hi = 64;
        QCOMPARE(run(lo, 1).finish_reason, QString("length"));
        QCOMPARE(run(hi, 1).generated_tokens, 0);
        for (int i = 0; i < 12; ++i) {
            const double mid = (lo + hi) / 2;
            const auto r = run(mid, 1);
            QVERIFY2(!r.id.isEmpty(), "no reply");
            (r.generated_tokens == 0 ? hi : lo) = mid;
        }
        const auto r = run(lo, 256);
        qInfo("bias %.4f: %s after %d tokens", lo, qPrintable(r.finish_reason), r.generated_tokens);
        QCOMPARE(r.finish_reason, QString("stop"));
        QVERIFY(r.generated_tokens > 0);
        QVERIFY(r.generated_tokens < s.max_tokens);
        QVERIFY(!r.token_ids.contains(im_end));
        QVERIFY(!r.output.contains("<|im_end|>"));
        QCOMPARE(chat.turns().last().text, r.output);
        QCOMPARE(chat.turns().last().finish_reason, QString("stop"));
        // The same run one token shorter than where it stopped: the same
        // tokens and an ordinary end (max tokens), so the stop came at the
        // next token, <|im_end|>, the only special token left.
        const auto shorter = run(lo, r.generated_tokens);
        QCOMPARE(shorter.finish_reason, QString("length"));
        QCOMPARE(shorter.token_ids, r.token_ids);
        // The next prompt closes that reply with the template's <|im_end|>:
        // one, not two.
        chat.conversation().turns() = {{true, "Hi there!", {}, {}, {}},
                                       {false, r.output, {}, {}, {}}};
        chat.input()->setPlainText("next");
        const QString next = chat.pendingPrompt().text;
        QVERIFY2(next.endsWith(r.output + "<|im_end|>\n<|im_start|>user\nnext<|im_end|>\n"
                                          "<|im_start|>assistant\n"),
                 qPrintable(next));
    }

    // While an earlier user turn is edited, the meter counts what sending
    // would submit: the turns before it plus the edited text, not the whole
    // old conversation plus the text as one more message. Expected: the
    // number of ids llama.cpp's record has for user / assistant / user.
    void meterWhileEditingCountsWhatWillBeSent() {
        const QJsonObject rec = llama_chat_record();
        QVERIFY(!rec.isEmpty());
        const QList<ui::ChatTurn> turns = turns_of(rec["messages"].toArray());
        QCOMPARE(turns.size(), 3);
        const int want = static_cast<int>(rec["prompt_ids"].toArray().size());
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        // user / assistant / "an old question" / "an old reply": editing
        // turn 2 into the record's third message gives the record's prompt.
        chat.conversation().turns() = turns.mid(0, 2);
        chat.conversation().turns().append({true, "an old question", {}, {}, {}});
        chat.conversation().turns().append({false, "an old reply", {}, {}, {}});
        chat.refresh();
        emit chat.transcript()->anchorClicked(QUrl("edit:2"));
        QCOMPARE(chat.editingIndex(), 2);
        chat.input()->setPlainText(turns[2].text);
        QCOMPARE(chat.pendingPrompt().text, rec["rendered"].toString());
        QCOMPARE(chat.pendingPrompt().tokens(), want);
        QTRY_VERIFY2(
            chat.meterLabel()->text().startsWith(QString("Prompt %1 / 512 tokens").arg(want)),
            qPrintable(chat.meterLabel()->text()));
        // Esc leaves editing: the meter counts the whole conversation again
        // plus the (now empty) input, more than the record's prompt.
        chat.cancelEdit();
        QVERIFY(chat.pendingPrompt().tokens() > want);
    }

    // Opening another model file starts a new chat and says so; reloading
    // the same file (a new context size) keeps the conversation. Runs last:
    // it loads the tiny llama-spm model and then the Qwen2.5 model again.
    void otherModelStartsNewChat() {
        ui::ChatView chat(bridge_.get(), nullptr, [&] { return s_; });
        const auto r = reply_to(chat, [&] { return chat.send("Hello"); });
        QVERIFY2(!r.id.isEmpty(), "no reply");
        QCOMPARE(chat.turns().size(), 2);
        auto load = [&](const QString& path, int n_ctx) {
            QSignalSpy loaded(bridge_.get(), &gui::EngineBridge::modelLoaded);
            gui::LoadRequest req;
            req.path = path;
            req.backend = "vulkan";
            req.n_ctx = n_ctx;
            req.n_parallel = 2;
            bridge_->loadModel(req);
            return QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 120000);
        };
        // The same file with another context: the chat stays.
        QVERIFY(load(kModel, 2048));
        QCOMPARE(chat.turns().size(), 2);
        QVERIFY2(!chat.statusLabel()->text().contains("new chat"),
                 qPrintable(chat.statusLabel()->text()));
        // Another file: a new chat, and the status line says so.
        const QString other = kData + "/golden2/llama-spm/llama-spm-f16.gguf";
        QVERIFY(load(other, 1024));
        QCOMPARE(chat.turns().size(), 0);
        QVERIFY2(
            chat.statusLabel()->text().startsWith("Opened llama-spm-f16.gguf: a new chat started"),
            qPrintable(chat.statusLabel()->text()));
        QVERIFY(load(kModel, 1024));
    }
};

QTEST_MAIN(UiChat)
#include "test_ui_chat.moc"
