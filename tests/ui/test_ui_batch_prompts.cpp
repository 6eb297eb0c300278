// The Batch tab with the real bridge and engine (CPU reference) and the
// bundled stories260K model: a prompt file's "messages" lines and the tab's
// system prompt are rendered by the one rule for templates (stories260K has
// none: plain text, the system prompt on its own line), unknown keys are
// listed as warnings naming their line, and a row's detail shows the
// max_tokens that request ran with. The bundled shared-system-prompt set
// gets prefix-cache hits. Expected prompts are hand-worked from the rule;
// nothing asserts on timing.

#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "desktop/engine_bridge.h"
#include "ui/batch_panel.h"
#include "ui/batch_results_model.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

bool load(gui::EngineBridge& bridge) {
    QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
    gui::LoadRequest req;
    req.path = kModel;
    req.backend = "cpu";
    req.n_ctx = 2048;
    req.n_parallel = 4;
    bridge.loadModel(req);
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 60000) &&
           !loaded.isEmpty();
}

bool run_and_wait(ui::BatchPanel& panel) {
    QSignalSpy done(&panel, &ui::BatchPanel::runFinished);
    if (!panel.run()) return false;
    return QTest::qWaitFor([&] { return !done.isEmpty(); }, 300000);
}

int row_of(const ui::BatchResultsModel& m, const QString& id) {
    for (int i = 0; i < m.rowCount(); ++i)
        if (m.result(i).id == id) return i;
    return -1;
}

}  // namespace

class UiBatchPrompts : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void messagesSystemPromptWarningsAndMaxTokens() {
        gui::EngineBridge bridge;
        QVERIFY(load(bridge));
        gui::GenSettings s;
        s.temperature = 0;
        s.max_tokens = 5;
        ui::BatchPanel panel(&bridge, nullptr, [&] { return s; });

        const QString path = dir_.filePath("prompts.jsonl");
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                "{\"id\": \"own\", \"prompt\": \"Once upon a time\", \"max_tokens\": 3}\n"
                "{\"id\": \"default\", \"prompt\": \"The little dog\"}\n"
                "{\"id\": \"chat\", \"messages\": [{\"role\": \"user\", \"content\": \"Lily "
                "and Ben\"}], \"temprature\": 0.5}\n");
        }
        QVERIFY(panel.loadPromptFile(path));
        QCOMPARE(panel.promptSet().items.size(), 3);
        QVERIFY(panel.promptSet().errors.isEmpty());
        // The unknown key, named with its line as the CLI prints it.
        QStringList listed;
        for (int i = 0; i < panel.problemList()->count(); ++i)
            listed << panel.problemList()->item(i)->text();
        QVERIFY2(listed.contains("warning: prompts.jsonl:3: unknown key \"temprature\" ignored"),
                 qPrintable(listed.join(" | ")));
        QVERIFY(!panel.problemList()->isHidden());

        panel.setSystemPrompt("A story.");
        QVERIFY(run_and_wait(panel));
        ui::BatchResultsModel* m = panel.results();
        QCOMPARE(m->rowCount(), 3);
        QVERIFY2(panel.statusLabel()->text().contains("1 warnings"),
                 qPrintable(panel.statusLabel()->text()));
        const int own = row_of(*m, "own"), def = row_of(*m, "default"), chat = row_of(*m, "chat");
        QVERIFY(own >= 0 && def >= 0 && chat >= 0);
        // The detail: the line's own limit, else the settings' 5.
        const QString d_own = panel.detailHtml(own), d_def = panel.detailHtml(def);
        // (QString::toHtmlEscaped leaves the apostrophe as it is.)
        QVERIFY2(d_own.contains("<i>max tokens</i></td><td>3 (the line's own max_tokens)"),
                 qPrintable(d_own));
        QVERIFY2(d_def.contains("<i>max tokens</i></td><td>5 (the settings' default)"),
                 qPrintable(d_def));
        // stories260K has no chat template: system prompt, then the prompt
        // (or the line's user message) on the next line.
        QCOMPARE(m->result(own).prompt, QString("A story.\nOnce upon a time"));
        QCOMPARE(m->result(def).prompt, QString("A story.\nThe little dog"));
        QCOMPARE(m->result(chat).prompt, QString("A story.\nLily and Ben"));
        QVERIFY2(panel.statusLabel()->text().contains("no chat template in " + kModel),
                 qPrintable(panel.statusLabel()->text()));
        QVERIFY(m->result(own).generated_tokens <= 3);
        QVERIFY(m->result(def).generated_tokens <= 5);
    }

    // The bundled set: 12 prompts whose messages share one system prompt;
    // at concurrency 4 the later requests find it in the prefix cache.
    void sharedSystemSetHitsThePrefixCache() {
        gui::EngineBridge bridge;
        QVERIFY(load(bridge));
        gui::GenSettings s;
        s.temperature = 0;
        ui::BatchPanel panel(&bridge, nullptr, [&] { return s; });
        QVERIFY(panel.loadSharedSystemSet());
        QCOMPARE(panel.promptSet().items.size(), 12);
        QVERIFY(panel.promptSet().errors.isEmpty());
        QVERIFY(panel.promptSet().warnings.isEmpty());
        panel.setConcurrency(4);
        QVERIFY(run_and_wait(panel));
        const ui::BatchPanel::Progress p = panel.progress();
        QCOMPARE(p.done, 12);
        QVERIFY2(p.cached_tokens > 0, qPrintable(panel.statusLabel()->text()));
        QVERIFY2(panel.statusLabel()->text().contains("prefix cache: hit rate 0.") &&
                     !panel.statusLabel()->text().contains("hit rate 0.000"),
                 qPrintable(panel.statusLabel()->text()));
    }
};

QTEST_MAIN(UiBatchPrompts)
#include "test_ui_batch_prompts.moc"
