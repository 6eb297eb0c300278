// The app opening a model whose chat template is hostile (the templates of
// tests/data/repro/templates-and-limits put into stories260K's
// tokenizer.chat_template): the load finishes, the model bar and the Chat
// tab say why the model's template is not used, naming the file and the
// limit, and a chat still gets its reply through the built-in format.

#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "chat_view.h"
#include "common/data_dir.h"
#include "common/gguf_set_string.h"
#include "common/hostile_templates.h"
#include "engine_bridge.h"
#include "model_bar.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kRepro = kData + "/repro/templates-and-limits/";

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
        QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
        QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
        gui::LoadRequest req;
        req.path = model;
        req.backend = "cpu";
        req.n_ctx = 256;
        req.n_parallel = 1;
        bridge.loadModel(req);
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000));
        QVERIFY2(!loaded.isEmpty(),
                 failed.isEmpty()
                     ? "no load signal"
                     : qPrintable(failed.first().first().value<gui::UserError>().what));

        // The model bar: a warning whose tooltip names the file and the limit.
        const auto info = loaded.first().first().value<gui::ModelInfo>();
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
};

QTEST_MAIN(UiHostile)
#include "test_ui_hostile.moc"
