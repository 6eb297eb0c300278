// The Chat tab's draft picker (speculative decoding, docs/speculative.md) on
// the real bridge and engine (CPU reference) with the bundled stories260K:
// n-gram drafting at temperature 0 gives the reply plain decoding gives,
// token for token, and the footer shows what speculation did; a reply that
// shares the engine with another request still speculates (its drafts are
// checked in the shared steps); the choice is kept in the settings; in
// the main window, picking a draft model file loads the model again with it
// and the reply (drafted by the same file: every draft token is kept) equals
// the plain one.

#include <QComboBox>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "desktop/engine_bridge.h"
#include "desktop/settings_store.h"
#include "desktop/speculation_text.h"
#include "ui/chat_view.h"
#include "ui/main_window.h"
#include "ui/widgets/draft_picker.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

// Text that repeats, so the reply (a story model continues it) has earlier
// n-grams to look up.
const QString kPrompt = "Lily had a red ball. Lily had a red ball. Lily had a red ball. Lily had";

bool load(gui::EngineBridge& bridge) {
    QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
    gui::LoadRequest req;
    req.path = kModel;
    req.backend = "cpu";
    req.n_ctx = 512;
    req.n_parallel = 2;
    bridge.loadModel(req);
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 60000) &&
           !loaded.isEmpty();
}

gui::RequestResult say(ui::ChatView& chat, const QString& text) {
    QSignalSpy done(&chat, &ui::ChatView::replyFinished);
    if (!chat.send(text)) return {};
    if (!QTest::qWaitFor([&] { return !done.isEmpty(); }, 120000)) return {};
    return done.first().first().value<gui::RequestResult>();
}

}  // namespace

class UiSpeculative : public QObject {
    Q_OBJECT
  private slots:
    void ngramReplyEqualsPlainAndFooterShowsStats() {
        gui::EngineBridge bridge;
        QVERIFY(load(bridge));
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 48;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        chat.resize(900, 600);

        const gui::RequestResult plain = say(chat, kPrompt);
        QCOMPARE(plain.finish_reason, QString("length"));
        QVERIFY(plain.speculative.drafter.empty());
        QVERIFY2(!chat.turns().last().footer.contains("draft"),
                 qPrintable(chat.turns().last().footer));

        // Pick n-gram in the box as a user does (k 4).
        chat.newChat();
        ui::DraftPicker* picker = chat.draftPicker();
        const int row = picker->kindBox()->findData("ngram");
        QVERIFY(row >= 0);
        picker->kindBox()->setCurrentIndex(row);
        emit picker->kindBox()->activated(row);
        picker->kBox()->setValue(4);
        QCOMPARE(gui::speculative_params(picker->choice()).kind,
                 scheduler::SpeculativeParams::Kind::Ngram);
        QCOMPARE(gui::speculative_params(picker->choice()).k, 4u);

        const gui::RequestResult spec = say(chat, kPrompt);
        QCOMPARE(spec.output, plain.output);
        QCOMPARE(spec.token_ids, plain.token_ids);
        const scheduler::SpeculativeStats& st = spec.speculative;
        QCOMPARE(QString::fromStdString(st.drafter), QString("ngram"));
        QVERIFY(st.verify_passes > 0);
        QVERIFY(st.accepted > 0);  // the text repeats: some draft tokens are kept
        QCOMPARE(st.shared_passes, 0);
        // Every decode pass emits its kept draft tokens plus one of its own;
        // the first token comes from the prefill.
        QCOMPARE(spec.generated_tokens - 1, st.target_passes + st.accepted);

        // The footer's figures, read back and worked out from the counts.
        const QString footer = chat.turns().last().footer;
        qInfo("footer: %s", qPrintable(footer));
        const QRegularExpression re(
            "draft ngram: acceptance ([0-9.]+)% \\(([0-9]+) of ([0-9]+) drafted\\) · ([0-9.]+) "
            "accepted tokens per target pass · draft ([0-9.]+) ms · verify ([0-9.]+) ms");
        const QRegularExpressionMatch m = re.match(footer);
        QVERIFY2(m.hasMatch(), qPrintable(footer));
        const int accepted = m.captured(2).toInt();
        const int drafted = m.captured(3).toInt();
        QCOMPARE(accepted, st.accepted);
        QCOMPARE(drafted, st.drafted);
        QVERIFY(drafted >= accepted);
        QCOMPARE(m.captured(1), QString::number(100.0 * accepted / drafted, 'f', 1));
        QCOMPARE(m.captured(4), QString::number(double(accepted) / st.verify_passes, 'f', 2));
        QVERIFY(m.captured(6).toDouble() > 0);
        QVERIFY(!footer.contains("not used"));
        QVERIFY(chat.grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_speculative.png"));
    }

    void replySharingTheEngineStillSpeculates() {
        gui::EngineBridge bridge;
        QVERIFY(load(bridge));
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 24;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        chat.draftPicker()->setChoice({"ngram", 5, {}});

        // Another request runs the whole time the reply does.
        QSignalSpy started(&bridge, &gui::EngineBridge::requestStarted);
        gui::RequestSpec other;
        other.id = "other";
        other.prompt = "Once upon a time";
        other.settings = s;
        other.settings.max_tokens = 400;
        QVERIFY(bridge.submit(other));
        QVERIFY(QTest::qWaitFor([&] { return !started.isEmpty(); }, 60000));

        const gui::RequestResult r = say(chat, kPrompt);
        bridge.cancel(QString("other"));
        QCOMPARE(r.finish_reason, QString("length"));
        // Drafts are checked inside the shared steps: the reply speculated
        // while the other request ran beside it.
        QVERIFY(r.speculative.shared_passes > 0);
        QVERIFY(r.speculative.verify_passes > 0);
        const QString footer = chat.turns().last().footer;
        qInfo("footer: %s", qPrintable(footer));
        QVERIFY2(footer.contains("acceptance") && !footer.contains("not used"), qPrintable(footer));
    }

    void draftModelFileLoadsWithTheModel() {
        QTemporaryDir dir;
        gui::SettingsStore store(dir.filePath("s.ini"));
        store.setBackend("cpu");
        gui::GenSettings g;
        g.temperature = 0;
        g.max_tokens = 32;
        store.setGen(g);
        ui::MainWindow w(&store, nullptr);
        w.setInteractive(false);
        QSignalSpy ready(&w, &ui::MainWindow::modelReady);
        w.openModel(kModel, true);
        QVERIFY(ready.wait(120000));
        QVERIFY(w.bridge()->loadedRequest().draft_model.isEmpty());
        ui::ChatView* chat = w.chat();
        const gui::RequestResult plain = say(*chat, kPrompt);
        QCOMPARE(plain.finish_reason, QString("length"));

        // The same file as its own draft: a reload, then every draft token is kept.
        chat->newChat();
        chat->draftPicker()->setChoice({"model", 3, kModel});
        QVERIFY(ready.wait(120000));
        QCOMPARE(w.bridge()->loadedRequest().draft_model, kModel);
        QCOMPARE(chat->draftPicker()->kindBox()->currentText(), QString("stories260K.gguf"));
        const gui::RequestResult spec = say(*chat, kPrompt);
        QCOMPARE(spec.token_ids, plain.token_ids);
        QCOMPARE(spec.output, plain.output);
        const scheduler::SpeculativeStats& st = spec.speculative;
        QVERIFY(st.verify_passes > 0);
        QCOMPARE(st.accepted, st.drafted);
        const QString footer = chat->turns().last().footer;
        QVERIFY2(footer.contains(QString("acceptance 100.0% (%1 of %1 drafted)").arg(st.drafted)),
                 qPrintable(footer));
        QCOMPARE(store.chatDraft().kind, QString("model"));
        QCOMPARE(store.chatDraft().file, kModel);

        // Back to none: loaded again without the draft.
        chat->draftPicker()->setChoice({"none", 3, {}});
        QVERIFY(ready.wait(120000));
        QVERIFY(w.bridge()->loadedRequest().draft_model.isEmpty());

        // A draft with another vocabulary: the load fails naming the first
        // differing token, the chat's draft goes back to none (it would
        // fail every later load) and the model loaded before stays.
        QSignalSpy failed(&w, &ui::MainWindow::loadFailed);
        const QString other =
            QString::fromStdString(wbtest::data_dir()) + "/models/llama-2-tiny-random.gguf";
        chat->draftPicker()->setChoice({"model", 3, other});
        QVERIFY(failed.wait(120000));
        const QString msg = w.statusBar()->currentMessage();
        QVERIFY2(msg.contains("draft model llama-2-tiny-random.gguf was not loaded") &&
                     msg.contains("draft vocabulary differs from the target's at token") &&
                     msg.contains("Draft is back to none"),
                 qPrintable(msg));
        QCOMPARE(chat->draftPicker()->choice().kind, QString("none"));
        QCOMPARE(store.chatDraft().kind, QString("none"));
        QVERIFY(w.bridge()->hasModel());
        QVERIFY(w.bridge()->loadedRequest().draft_model.isEmpty());
        chat->newChat();
        QCOMPARE(say(*chat, kPrompt).token_ids, plain.token_ids);
    }

    void choiceIsKeptInTheSettings() {
        QTemporaryDir dir;
        const QString ini = dir.filePath("settings.ini");
        gui::EngineBridge bridge;
        {
            gui::SettingsStore store(ini);
            ui::ChatView chat(&bridge, nullptr, [] { return gui::GenSettings{}; });
            chat.setStore(&store);
            QCOMPARE(chat.draftPicker()->choice().kind, QString("none"));
            chat.draftPicker()->setChoice({"ngram", 7, {}});
            store.sync();
        }
        gui::SettingsStore store(ini);
        ui::ChatView chat(&bridge, nullptr, [] { return gui::GenSettings{}; });
        chat.setStore(&store);
        QCOMPARE(chat.draftPicker()->choice().kind, QString("ngram"));
        QCOMPARE(chat.draftPicker()->kBox()->value(), 7);
        QCOMPARE(chat.draftPicker()->kindBox()->currentData().toString(), QString("ngram"));
        QCOMPARE(chat.draftFile(), QString());

        // A remembered draft model file that is gone means no draft (its
        // load would fail the model's).
        store.setChatDraft({"model", 3, dir.filePath("gone.gguf")});
        ui::ChatView again(&bridge, nullptr, [] { return gui::GenSettings{}; });
        again.setStore(&store);
        QCOMPARE(again.draftPicker()->choice().kind, QString("none"));
        QCOMPARE(again.draftFile(), QString());
    }
};

QTEST_MAIN(UiSpeculative)
#include "test_ui_speculative.moc"
