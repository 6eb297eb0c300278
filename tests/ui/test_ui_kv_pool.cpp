// What the KV pool shows in the app, through the real bridge, the real
// engine (CPU reference) and the bundled stories260K model: a chat's second
// turn takes the first from the prefix cache and its footer says so; a
// conversation that outgrows the context ends with finish reason "context"
// and the chat offers to drop its oldest turns, saying how many tokens that
// frees (counted here with the model's tokenizer, independently of the
// chat); the batch table's cached column; the model bar's cold-start
// tooltip, before and after the first token.

#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSignalSpy>
#include <QtTest>
#include <vector>

#include "common/data_dir.h"
#include "desktop/engine_bridge.h"
#include "gguf/gguf.h"
#include "tokenizer/vocab.h"
#include "ui/batch_results_model.h"
#include "ui/chat_view.h"
#include "ui/model_bar.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

bool load(gui::EngineBridge& bridge, int n_ctx, const QString& model = kModel) {
    QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
    gui::LoadRequest req;
    req.path = model;
    req.backend = "cpu";
    req.n_ctx = n_ctx;
    req.n_parallel = 2;
    bridge.loadModel(req);
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 60000) &&
           !loaded.isEmpty();
}

/// Sends `text` and waits for the reply; returns its result.
gui::RequestResult say(ui::ChatView& chat, const QString& text) {
    QSignalSpy done(&chat, &ui::ChatView::replyFinished);
    if (!chat.send(text)) return {};
    if (!QTest::qWaitFor([&] { return !done.isEmpty(); }, 120000)) return {};
    return done.first().first().value<gui::RequestResult>();
}

/// Prompt token ids of `text` (BOS included) by the model's own vocabulary.
std::vector<int> ids_of(const QString& text) {
    const gguf::File f = gguf::File::open(kModel.toStdString());
    const tokenizer::Vocab v = tokenizer::Vocab::from_gguf(f);
    const std::vector<int32_t> ids = v.tokenize(text.toStdString(), true);
    return {ids.begin(), ids.end()};
}

int tokens_of(const QString& text) {
    return static_cast<int>(ids_of(text).size());
}

}  // namespace

class UiKvPool : public QObject {
    Q_OBJECT
  private slots:
    void secondTurnIsCachedAndColdStartShown() {
        gui::EngineBridge bridge;
        ui::ModelBar bar;
        connect(&bridge, &gui::EngineBridge::modelLoaded, &bar, &ui::ModelBar::setModel);
        connect(&bridge, &gui::EngineBridge::coldStartChanged, &bar, &ui::ModelBar::setColdStart);
        QVERIFY(load(bridge, 512));
        QVERIFY(bridge.coldStart().ready_ms > 0);
        QVERIFY(bridge.coldStart().upload_ms > 0);
        const QString before = bar.modelLabel()->toolTip();
        QVERIFY2(before.contains("Cold start") && before.contains("first token: not yet"),
                 qPrintable(before));

        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 24;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        const gui::RequestResult first = say(chat, "Lily went to the park.");
        QCOMPARE(first.prompt_cached_tokens, 0);
        QVERIFY(bridge.coldStart().first_token_ms >= bridge.coldStart().ready_ms);
        const QString after = bar.modelLabel()->toolTip();
        QVERIFY2(after.contains("after open") && !after.contains("not yet"), qPrintable(after));

        // Turn 2's prompt text starts with turn 1's prompt and reply. What
        // the pool can give it, worked out from token ids alone: the tokens
        // turn 1 fed (its prompt, and its reply but for a last token cut by
        // max_tokens), in blocks of 16; whole blocks within the common
        // prefix with turn 2's ids are shared, and the partly filled last
        // block is taken over when all of it matches. Turn 2 computes at
        // least its last prompt token.
        const gui::RequestResult second = say(chat, "Then she saw a dog.");
        std::vector<int> fed = ids_of(first.prompt);
        for (int t : first.token_ids) fed.push_back(t);
        if (first.finish_reason == "length") fed.pop_back();
        const std::vector<int> next = ids_of(second.prompt);
        size_t common = 0;
        while (common < fed.size() && common < next.size() && fed[common] == next[common]) ++common;
        const size_t limit = next.size() - 1;
        size_t want = 0;
        while (want + 16 <= fed.size() && want + 16 <= limit && want + 16 <= common) want += 16;
        const size_t tail = fed.size() - want;
        if (tail > 0 && tail < 16 && want + tail <= limit && want + tail <= common) want += tail;
        qInfo("turn 1 fed %zu tokens, %zu shared with turn 2's %zu; cached %d (expected %zu)",
              fed.size(), common, next.size(), second.prompt_cached_tokens, want);
        QCOMPARE(second.prompt_tokens, static_cast<int>(next.size()));
        QCOMPARE(second.prompt_cached_tokens, static_cast<int>(want));
        QVERIFY(want >= 16);  // the test means something: at least one block reused
        const QString footer = chat.turns().last().footer;
        QVERIFY2(footer.contains(QString("prompt %1 tokens (%2 cached)")
                                     .arg(second.prompt_tokens)
                                     .arg(second.prompt_cached_tokens)),
                 qPrintable(footer));
    }

    // A reply past the model's training context (the tiny
    // llama-spm model: 512) on a larger pool says so in its footer; a
    // short one does not.
    void pastTheTrainingContextIsShown() {
        gui::EngineBridge bridge;
        QVERIFY(load(
            bridge, 4096,
            QString::fromStdString(wbtest::data_dir()) + "/golden2/llama-spm/llama-spm-f16.gguf"));
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 4;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        const gui::RequestResult short_r = say(chat, "Lily went to the park.");
        QVERIFY(!short_r.past_n_ctx_train);
        QVERIFY(!chat.turns().last().footer.contains("training context"));
        // Before sending: the meter counts against the one per-request
        // number the model bar and status bar use (the training context,
        // 512, not the 4096-token pool) and warns that the draft goes past it.
        const QString long_text = QString("Lily went to the park with her mom. ").repeated(60);
        chat.input()->setPlainText(long_text);
        auto* meter = chat.findChild<QProgressBar*>("chatTokenMeter");
        auto* meter_text = chat.findChild<QLabel*>("chatTokenMeterText");
        QVERIFY(meter && meter_text);
        QVERIFY(QTest::qWaitFor(
            [&] { return meter_text->text().contains("past the model's 512-token"); }, 10000));
        QCOMPARE(meter->maximum(), 512);
        QVERIFY2(meter_text->text().contains("KV pool holds 4096"), qPrintable(meter_text->text()));
        chat.input()->clear();
        const gui::RequestResult long_r = say(chat, long_text);
        QVERIFY2(long_r.prompt_tokens > 512, qPrintable(long_r.error));
        QVERIFY(long_r.past_n_ctx_train);
        QCOMPARE(long_r.n_ctx_train, 512);
        const QString footer = chat.turns().last().footer;
        QVERIFY2(footer.contains("past the model's 512-token training context"),
                 qPrintable(footer));
    }

    void contextEndOffersToDropOldestTurns() {
        gui::EngineBridge bridge;
        QVERIFY(load(bridge, 64));
        QCOMPARE(bridge.contextSize(), 64);
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 1000;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        chat.show();

        // One turn runs into the context: finish reason "context", not
        // "length"; nothing older to drop yet.
        // (Greedy on this prompt runs far past 64 tokens without an EOS.)
        const gui::RequestResult r1 = say(chat, "Lily and Ben were friends. Every day");
        QCOMPARE(r1.finish_reason, QString("context"));
        QVERIFY(r1.context_full);
        QCOMPARE(r1.prompt_tokens + r1.generated_tokens, 64 + 1);  // the last one is never fed
        QVERIFY(chat.contextNotice()->isVisible());
        QVERIFY2(chat.contextNotice()->text().contains("no older turn"),
                 qPrintable(chat.contextNotice()->text()));

        // The next message makes the prompt longer than the context: refused,
        // and now the first exchange can go.
        s.max_tokens = 8;
        const gui::RequestResult r2 = say(chat, "Then she saw a dog.");
        QCOMPARE(r2.finish_reason, QString("error"));
        QVERIFY(r2.context_full);  // told by kind: the chat never reads the message's words
        QVERIFY(chat.contextNotice()->isVisible());
        const QString whole = ui::ChatView::conversationText(chat.turns());
        const QString rest = ui::ChatView::conversationText(chat.turns().mid(2));
        const int freed = tokens_of(whole) - tokens_of(rest);
        const ui::ChatView::DropPlan plan = chat.dropPlan();
        QCOMPARE(plan.turns, 2);
        QCOMPARE(plan.tokens_before, tokens_of(whole));
        QCOMPARE(plan.freed_tokens, freed);
        const QString notice = chat.contextNotice()->text();
        QVERIFY2(notice.contains(QString("oldest 2 turns frees %1 tokens").arg(freed)),
                 qPrintable(notice));

        QCOMPARE(chat.dropOldestTurns(), 2);
        QVERIFY(!chat.contextNotice()->isVisible());
        QCOMPARE(chat.turns().size(), 2);
        QCOMPARE(chat.turns().first().text, QString("Then she saw a dog."));
        const gui::RequestResult r3 = say(chat, "They ran home.");
        QVERIFY2(r3.finish_reason == "length" || r3.finish_reason == "stop",
                 qPrintable(r3.finish_reason + " " + r3.error));
    }

    void batchTableShowsCachedTokens() {
        ui::BatchResultsModel m;
        gui::RequestResult r;
        r.id = "p1";
        r.prompt_tokens = 210;
        r.prompt_cached_tokens = 192;
        m.append(r);
        gui::RequestResult never;  // refused before admission: no figure
        never.id = "p2";
        m.append(never);
        QCOMPARE(m.index(0, ui::BatchResultsModel::Cached).data().toString(), QString("192/210"));
        QCOMPARE(m.index(0, ui::BatchResultsModel::Cached).data(Qt::UserRole).toInt(), 192);
        QCOMPARE(m.index(1, ui::BatchResultsModel::Cached).data().toString(), QString());
    }
};

QTEST_MAIN(UiKvPool)
#include "test_ui_kv_pool.moc"
