// The app opening a model whose chat template is hostile (the templates of
// tests/data/repro/templates-and-limits put into stories260K's
// tokenizer.chat_template): the load finishes, the model bar and the Chat
// tab say why the model's template is not used, naming the file and the
// limit, and a chat still gets its reply through the built-in format. And
// the other case of the same rule (chat::choose_template): a model without a
// template (stories260K) is completed as plain text with a note, in the Chat
// tab exactly as `workbench-cli generate --chat` renders it.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "common/data_dir.h"
#include "common/gguf_set_string.h"
#include "common/hostile_templates.h"
#include "common/process.h"
#include "desktop/engine_bridge.h"
#include "ui/chat_view.h"
#include "ui/model_bar.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kRepro = kData + "/repro/templates-and-limits/";

/// Loads `model` in `bridge` on the CPU backend (256-token pool, one
/// sequence) and returns what modelLoaded carried; "" in `error` on
/// success, else why it failed (the load's error, or "no load signal").
gui::ModelInfo load_on_cpu(gui::EngineBridge& bridge, const QString& model, QString& error) {
    QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
    gui::LoadRequest req;
    req.path = model;
    req.backend = "cpu";
    req.n_ctx = 256;
    req.n_parallel = 1;
    bridge.loadModel(req);
    (void)QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000);
    if (!loaded.isEmpty()) {
        error.clear();
        return loaded.first().first().value<gui::ModelInfo>();
    }
    error = failed.isEmpty() ? QString("no load signal")
                             : failed.first().first().value<gui::UserError>().what;
    return {};
}

}  // namespace

class UiHostile : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void openingAHostileModelSaysWhyAndChats_data() { wbtest::add_hostile_template_rows(); }
    void openingAHostileModelSaysWhyAndChats() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        const QString model = dir_.filePath(file + ".gguf");
        QFile src(kRepro + file);
        QVERIFY(src.open(QIODevice::ReadOnly));
        wbtest::gguf_set_string((kData + "/models/stories260K.gguf").toStdString(),
                                model.toStdString(), "tokenizer.chat_template",
                                src.readAll().toStdString());

        gui::EngineBridge bridge;
        QString error;
        const gui::ModelInfo info = load_on_cpu(bridge, model, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));

        // The model bar: a warning whose tooltip names the file and the limit.
        ui::ModelBar bar;
        bar.setModel(info);
        QVERIFY(!bar.templateNoteLabel()->isHidden());
        const QString tip = bar.templateNoteLabel()->toolTip();
        QVERIFY2(tip.contains(model) && tip.contains(says), qPrintable(tip));

        // The Chat tab: the notice says why; the built-in format is used.
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 3;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        QVERIFY(!chat.templateNotice()->isHidden());
        QVERIFY2(chat.templateNotice()->text().contains(says),
                 qPrintable(chat.templateNotice()->text()));
        QVERIFY2(chat.templateInfo()->text().contains("built-in"),
                 qPrintable(chat.templateInfo()->text()));

        QSignalSpy done(&chat, &ui::ChatView::replyFinished);
        chat.input()->setPlainText("Once upon a time");
        QTest::keyClick(chat.input(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 120000));
        const auto r = done.first().first().value<gui::RequestResult>();
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY2(r.finish_reason == "length" || r.finish_reason == "stop",
                 qPrintable(r.finish_reason));
        QVERIFY(r.generated_tokens > 0);
    }

    // stories260K has no tokenizer.chat_template (a base model): the CLI's
    // generate --chat and the Chat tab give the same plain-text prompt, the
    // system prompt and the user turn on two lines (hand-worked from the
    // rule: "S\nU"), tokenized as a raw prompt, and both say so.
    void aModelWithoutATemplateCompletesPlainTextEverywhere() {
        const QString model = kData + "/models/stories260K.gguf";
        const QString system = "A story for small children.";
        const QString user = "Once upon a time";
        const QString expected = system + "\n" + user;
        const QString note = "no chat template in " + model + ": plain text completion";

        const wbtest::ProcessResult cli =
            wbtest::run_process(WB_CLI,
                                {"generate", "-m", model, "--chat", "--system", system, "--user",
                                 user, "-n", "0", "--json", "--no-log", "--backend", "cpu"},
                                120000);
        QVERIFY2(cli.code == 0, cli.err.constData());
        QVERIFY2(cli.err.contains(note.toUtf8()), cli.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(cli.out).object();
        QCOMPARE(j["prompt"].toString(), expected);
        // The ids of the same text as a plain prompt (no --chat).
        const wbtest::ProcessResult raw =
            wbtest::run_process(WB_CLI,
                                {"generate", "-m", model, "-p", expected, "-n", "0", "--json",
                                 "--no-log", "--backend", "cpu"},
                                120000);
        QVERIFY2(raw.code == 0, raw.err.constData());
        const QJsonArray raw_ids =
            QJsonDocument::fromJson(raw.out).object()["prompt_token_ids"].toArray();
        QCOMPARE(j["prompt_token_ids"].toArray(), raw_ids);

        gui::EngineBridge bridge;
        QString error;
        const gui::ModelInfo info = load_on_cpu(bridge, model, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        ui::ModelBar bar;
        bar.setModel(info);
        QVERIFY(!bar.templateNoteLabel()->isHidden());
        QVERIFY2(bar.templateNoteLabel()->toolTip().contains(note),
                 qPrintable(bar.templateNoteLabel()->toolTip()));

        gui::GenSettings s;
        ui::ChatView chat(&bridge, nullptr, [&] { return s; });
        QVERIFY(!chat.templateNotice()->isHidden());
        QVERIFY2(chat.templateNotice()->text().contains(note),
                 qPrintable(chat.templateNotice()->text()));
        chat.setSystemPrompt(system);
        chat.input()->setPlainText(user);
        const ui::ChatPromptText p = chat.pendingPrompt();
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.text, expected);
        QList<int> gui_ids;
        for (const int32_t id : p.ids) gui_ids << id;
        QList<int> cli_ids;
        for (const QJsonValue& v : raw_ids) cli_ids << v.toInt();
        QCOMPARE(gui_ids, cli_ids);
    }
};

QTEST_MAIN(UiHostile)
#include "test_ui_hostile.moc"
