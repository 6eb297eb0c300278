// The History tab's "Compare environments" on a real run log (offscreen):
// rows of one run leave it disabled; rows of two runs enable the button and
// the table's context-menu action (Ctrl+Shift+D), and the dialog lists the
// differing tags (model file, temperature) with their values and the
// prompt comparison. Run A: stories260K, temperature 0.8; run B: the tiny
// random Llama, temperature 0.2; both answer "p1" ("same" both times) and
// "p2" ("abc" / "abd"): 1 of 2 identical.

#include <QAction>
#include <QPushButton>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "ui/history_view.h"
#include "ui/run_diff_dialog.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());

// Selects the table rows whose Run column reads "batch #<run>".
void select_run_rows(QTableView* t, const QList<qint64>& runs) {
    t->clearSelection();
    for (int r = 0; r < t->model()->rowCount(); ++r)
        if (runs.contains(t->model()->index(r, 2).data(Qt::UserRole).toLongLong()))
            t->selectionModel()->select(t->model()->index(r, 0),
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
}

// "<key>" -> row of the dialog's table.
QMap<QString, QStringList> rows_by_key(const QTableWidget* t) {
    QMap<QString, QStringList> out;
    for (int r = 0; r < t->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < t->columnCount(); ++c) cells << t->item(r, c)->text();
        out[t->item(r, 0)->data(Qt::UserRole).toString()] = cells;
    }
    return out;
}

}  // namespace

class UiRunDiff : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString db_;
    qint64 a_ = 0, b_ = 0;

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        db_ = dir_.filePath("runlog.sqlite");
        runlog::RunLog log = runlog::RunLog::open(db_.toStdString());
        const int64_t mv_a =
            log.ensure_model_version((kData + "/models/stories260K.gguf").toStdString());
        const int64_t mv_b =
            log.ensure_model_version((kData + "/models/llama-2-tiny-random.gguf").toStdString());
        const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
        auto write = [&](int64_t mv, double temp, const char* out2) {
            const int64_t run = log.begin_run("batch", "prompts.jsonl", nlohmann::json::object());
            int i = 0;
            for (const auto& [prompt, output] : {std::pair{"p1", "same"}, std::pair{"p2", out2}}) {
                runlog::ResponseRecord r;
                r.run_id = run;
                r.model_version_id = mv;
                r.environment_id = env;
                r.settings = {{"temperature", temp}, {"top_k", 40}};
                r.prompt = prompt;
                r.output = output;
                r.e2e_ms = 100.0 + i++;
                r.started_ms = 1764460800000;
                log.log_response(r);
            }
            return run;
        };
        a_ = write(mv_a, 0.8, "abc");
        b_ = write(mv_b, 0.2, "abd");
    }

    void comparesTheTwoSelectedRuns() {
        ui::HistoryView v;
        QVERIFY(v.setDatabase(db_));
        QCOMPARE(v.rowCount(), 4);
        auto* table = v.findChild<QTableView*>();
        auto* button = v.findChild<QPushButton*>("compareEnvironments");
        QVERIFY(table && button);
        QAction* action = nullptr;
        for (QAction* x : table->actions())
            if (x->text() == "Compare environments") action = x;
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));

        select_run_rows(table, {a_});  // one run: nothing to compare
        QVERIFY(!button->isEnabled());
        QVERIFY(!action->isEnabled());
        QCOMPARE(v.selectedRuns(), qMakePair(qint64(-1), qint64(-1)));

        select_run_rows(table, {a_, b_});
        QVERIFY(button->isEnabled());
        QVERIFY(action->isEnabled());
        QCOMPARE(v.selectedRuns(), qMakePair(a_, b_));
        QTest::mouseClick(button, Qt::LeftButton);
        auto* dlg = v.findChild<ui::RunDiffDialog*>("runDiffDialog");
        QVERIFY(dlg);
        QVERIFY(dlg->isVisible());
        const QMap<QString, QStringList> rows = rows_by_key(dlg->fieldsTable());
        QVERIFY2(rows.contains("model.sha256"), qPrintable(rows.keys().join(", ")));
        QCOMPARE(rows["sampling.temperature"],
                 QStringList({"sampling: temperature", "0.8", "0.2", "yes"}));
        QVERIFY(!rows.contains("run.kind"));  // both batch
        QVERIFY(!rows.contains("sampling.top_k"));
        // The rows that change outputs come first.
        QCOMPARE(dlg->fieldsTable()->item(0, 3)->text(), QString("yes"));
        const QString summary = dlg->promptSummary();
        QVERIFY2(summary.contains("Prompts both answered: 2") &&
                     summary.contains("Identical outputs: 1 of 2 (50.0%)") &&
                     summary.contains("first differs at character 2"),
                 qPrintable(summary));
        dlg->close();  // deleted on close
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QVERIFY(!v.findChild<ui::RunDiffDialog*>("runDiffDialog"));

        // The context-menu action opens the same comparison.
        action->trigger();
        auto* again = v.findChild<ui::RunDiffDialog*>("runDiffDialog");
        QVERIFY(again);
        again->close();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);

        // And so does the keyboard: Ctrl+Shift+D in the table.
        v.show();
        v.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&v));
        table->setFocus();
        QTest::keyClick(table, Qt::Key_D, Qt::ControlModifier | Qt::ShiftModifier);
        QVERIFY(v.findChild<ui::RunDiffDialog*>("runDiffDialog"));
    }
};

QTEST_MAIN(UiRunDiff)
#include "test_ui_run_diff.moc"
