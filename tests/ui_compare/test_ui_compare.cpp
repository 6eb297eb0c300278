// GUI test of the Compare tab and the quantize dialog, offscreen,
// against the real engine on Vulkan (lavapipe here) and real model files:
//  - three panes (stories260K F32 = A, its golden Q8_0 = B and Q4_0 = C)
//    stream greedy replies; A's tokens equal llama.cpp's F32 greedy tokens
//    and B's / C's equal the greedy tokens of a float64 forward pass on the
//    dequantized weights (golden `generated_token_ids_f64_dequant`);
//  - the figures table is filled; the per-token view marks exactly the
//    steps where those golden sequences differ, with A's token in the tooltip;
//  - each model file is loaded exactly once per comparison (streaming and
//    figures share the models), counted through the tab's loader seam;
//  - a test-set run (perplexity text + JSONL) fills the PPL row, with A's
//    PPL within 0.1% of llama-perplexity's 4.7437, and every response lands
//    in the run log under one "compare" run; Cancel stops a test-set run
//    and a streaming one;
//  - the quantize dialog writes a Q4_0 copy whose SHA-256 equals the golden
//    file's (SHA256SUMS), lists the tensors kept F16 / F32, and opens the
//    copy in a Compare pane.
#include <sqlite3.h>

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTimer>
#include <map>
#include <mutex>

#include "common/data_dir.h"
#include "common/json_fixtures.h"
#include "compare/compare.h"
#include "compare/compare_jobs.h"
#include "desktop/engine_bridge.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/compare/eval_inputs_dialog.h"
#include "ui/compare/report_table.h"
#include "ui/compare/token_diff_view.h"
#include "ui/history_view.h"
#include "ui/main_window.h"
#include "ui/widgets/quantize_dialog.h"

using wb::ui::compare::CompareTab;
using wb::ui::compare::EvalInputsDialog;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kF32 = kData + "/models/stories260K.gguf";
const QString kQ8 = kData + "/golden/quant/stories260K-q8_0.gguf";
const QString kQ4 = kData + "/golden/quant/stories260K-q4_0.gguf";

using wbtest::ids;
using wbtest::read_jsonl;
const std::string kGolden = wbtest::data_dir() + "/golden";

// Counts the Compare tab's model loads per file through its loader seam
// (setModelLoader); loads run on worker threads, several at once.
class LoadCounter {
  public:
    wb::compare::ModelLoadFn loader() {
        return [this](const std::string& path, const wb::model::LoadOptions& lo) {
            {
                const std::lock_guard<std::mutex> lock(mu_);
                ++loads_[QString::fromStdString(path)];
            }
            return wb::model::load_model(path, lo);
        };
    }
    int loads(const QString& path) {
        const std::lock_guard<std::mutex> lock(mu_);
        return loads_[path];
    }
    void reset() {
        const std::lock_guard<std::mutex> lock(mu_);
        loads_.clear();
    }

  private:
    std::mutex mu_;
    std::map<QString, int> loads_;
};

// Positions where two equally long sequences differ (the expectation for
// the per-token view, from golden data).
std::vector<size_t> differing(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    std::vector<size_t> d;
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i >= a.size() || i >= b.size() || a[i] != b[i]) d.push_back(i);
    }
    return d;
}

// Count of responses in the run log at `db` for `run_id`, and that run's kind.
std::pair<int, QString> logged(const QString& db, qint64 run_id) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        qFatal("cannot open %s", qPrintable(db));
    }
    auto one = [&](const char* sql) {
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(h, sql, -1, &st, nullptr);
        sqlite3_bind_int64(st, 1, run_id);
        QString v;
        if (sqlite3_step(st) == SQLITE_ROW) {
            v = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
        }
        sqlite3_finalize(st);
        return v;
    };
    const int n = one("SELECT COUNT(*) FROM responses WHERE run_id = ?").toInt();
    const QString kind = one("SELECT kind FROM runs WHERE id = ?");
    sqlite3_close(h);
    return {n, kind};
}

QString cell(const QTableWidget* t, int row, int col) {
    return t->item(row, col) ? t->item(row, col)->text() : QString();
}

}  // namespace

class TestUiCompare : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir tmp_;

  private slots:
    void initTestCase() { QVERIFY(tmp_.isValid()); }

    // "Run test set…" asks in one dialog that offers the bundled samples,
    // says what each format is and what the chosen file holds, and uses the
    // CLI's perplexity window (workbench-cli compare --ctx default 512).
    // Word and item counts: `wc -w` and the file read by hand.
    void eval_inputs_dialog_offers_samples_and_cli_window() {
        EvalInputsDialog d;
        QVERIFY2(d.textFile().endsWith("/stories-sample.txt") && QFile::exists(d.textFile()),
                 qPrintable(d.textFile()));
        QVERIFY2(
            d.testsetFile().endsWith("/stories-testset.jsonl") && QFile::exists(d.testsetFile()),
            qPrintable(d.testsetFile()));
        QCOMPARE(d.perplexityWindow(), 512);
        QVERIFY2(d.textInfo()->text().contains("1119 words"), qPrintable(d.textInfo()->text()));
        QVERIFY(d.textInfo()->text().contains("at least 1024 tokens"));
        QVERIFY2(d.testsetInfo()->text().contains("8 items (0 matched exactly, 8 by contains)"),
                 qPrintable(d.testsetInfo()->text()));
        // The size line follows the window and the files.
        d.setPerplexityWindow(128);
        QVERIFY(d.textInfo()->text().contains("at least 256 tokens"));
        const QString bad = tmp_.filePath("bad.jsonl");
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"prompt\": \"a\", \"answer\": \"b\"}\n{\"prompt\": 3}\n");
        }
        d.setTestsetFile(bad);
        QVERIFY2(d.testsetInfo()->text().contains("bad.jsonl:2:"),
                 qPrintable(d.testsetInfo()->text()));
        d.setTextFile({});
        QCOMPARE(d.textInfo()->text(), QString("Not part of the run."));
        QVERIFY(d.textFile().isEmpty());
        // The tab's window without the dialog is the CLI's too (was 128).
        CompareTab tab;
        QCOMPARE(tab.perplexityContext(), 512);
    }

    void panes_stream_and_table_and_token_view() {
        // Prompt 5 of the golden set: Q8_0 and Q4_0 both split from F32 here.
        const QJsonObject g32 = read_jsonl(kGolden + "/stories260K_greedy.jsonl").at(5);
        const QJsonObject g8 = read_jsonl(kGolden + "/quant/stories260K-q8_0_greedy.jsonl").at(5);
        const QJsonObject g4 = read_jsonl(kGolden + "/quant/stories260K-q4_0_greedy.jsonl").at(5);
        const std::vector<int32_t> want_a = ids(g32["generated_token_ids"]);
        const std::vector<int32_t> want_b = ids(g8["generated_token_ids_f64_dequant"]);
        const std::vector<int32_t> want_c = ids(g4["generated_token_ids_f64_dequant"]);
        QCOMPARE(want_a.size(), size_t(48));

        // The app's run log: the tab writes through its recorder.
        const QString db = tmp_.filePath("runlog.sqlite");
        wb::gui::RunRecorder recorder;
        QString notice;
        QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
        CompareTab tab;
        LoadCounter counter;
        tab.setModelLoader(counter.loader());
        tab.setRecorder(&recorder);
        tab.setBackend("vulkan");
        tab.addModel(kF32);
        tab.addModel(kQ8);
        tab.addModel(kQ4);
        tab.setPrompt(g32["prompt"].toString());
        tab.setMaxTokens(48);
        tab.resize(1200, 800);
        tab.show();

        // Tokens must reach the panes while generation runs, not all at the end.
        int ticks_with_partial = 0;
        QTimer probe;
        QObject::connect(&probe, &QTimer::timeout, [&] {
            for (auto* p : tab.panes()) {
                if (!p->tokens().empty() && p->tokens().size() < 48) ++ticks_with_partial;
            }
        });
        probe.start(1);
        QSignalSpy replies(&tab, &CompareTab::repliesFinished);
        QSignalSpy report(&tab, &CompareTab::reportReady);
        QSignalSpy failed(&tab, &CompareTab::comparisonFailed);
        QSignalSpy logged_spy(&tab, &CompareTab::runLogged);
        tab.runPrompt();
        QVERIFY(tab.busy());
        QVERIFY(replies.wait(300000));
        probe.stop();
        qInfo("timer ticks that saw a partial reply: %d", ticks_with_partial);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(tab.panes()[0]->tokens(), want_a);
        QCOMPARE(tab.panes()[1]->tokens(), want_b);
        QCOMPARE(tab.panes()[2]->tokens(), want_c);
        QVERIFY(tab.panes()[0]->replyText().contains(g32["generated_text"].toString().left(20)));

        // Per-token view: exactly the golden differences, highlighted, with A's token.
        const auto* view = tab.tokenView();
        const std::vector<size_t> dc = differing(want_a, want_c);
        QVERIFY(!dc.empty());
        QCOMPARE(view->diffPositions(1), differing(want_a, want_b));
        QCOMPARE(view->diffPositions(2), dc);
        int highlighted = 0;
        bool tooltip_names_a = false;
        for (QTextBlock b = view->document()->begin(); b.isValid(); b = b.next()) {
            for (auto it = b.begin(); !it.atEnd(); ++it) {
                const QTextCharFormat f = it.fragment().charFormat();
                if (f.background().color() == wb::ui::compare::TokenDiffView::diffColor()) {
                    ++highlighted;
                    if (f.toolTip().contains(QStringLiteral("(id %1)").arg(want_a[dc[0]]))) {
                        tooltip_names_a = true;
                    }
                }
            }
        }
        // Adjacent highlighted tokens never merge: a "|" separator sits between tokens.
        QCOMPARE(highlighted, int(differing(want_a, want_b).size() + dc.size()));
        QVERIFY(tooltip_names_a);

        // Figures table from run_compare on the same prompt.
        QVERIFY(report.count() > 0 || report.wait(300000));
        QCOMPARE(failed.count(), 0);
        const auto* t = tab.table();
        QCOMPARE(t->columnCount(), 4);
        const int decode = t->rowOf("decode tokens/s");
        QVERIFY(decode >= 0);
        // Speed: llama-bench's default 5 timed passes after 1 untimed
        // warm-up, "median (min-max)"; each pane shows its column's figure
        // (one set of figures per model), not a timing of its own.
        QCOMPARE(tab.repetitions(), 5);
        QCOMPARE(tab.report()->repetitions, 5u);
        for (int c = 1; c <= 3; ++c) {
            const auto& m = tab.report()->models[size_t(c - 1)];
            QCOMPARE(m.warmup_runs.size(), size_t(1));
            QCOMPARE(m.timed_runs.size(), size_t(5));
            QCOMPARE(m.decode_tps.samples.size(), size_t(5));
            const QString fig = cell(t, decode, c);
            QVERIFY2(fig.section(QLatin1Char(' '), 0, 0).toDouble() > 0, qPrintable(fig));
            QVERIFY2(fig.contains(QRegularExpression("^[0-9.]+ \\([0-9.]+-[0-9.]+\\)$")),
                     qPrintable(fig));
            const QString status = tab.panes()[size_t(c - 1)]->statusText();
            QVERIFY2(status.contains("decode " + fig + " tokens/s"), qPrintable(status));
            QVERIFY2(!status.contains("side by side"), qPrintable(status));
        }
        const int agree = t->rowOf("teacher-forced agreement");
        QVERIFY(cell(t, agree, 1).startsWith("100.00% (48/48)"));
        const int split = t->rowOf("first split");
        QCOMPARE(cell(t, split, 3), QString::number(dc[0]));
        QVERIFY(t->rowOf("device memory") >= 0);
        // The report's own runs (the streamed models again, from a fresh KV
        // cache) agree with the streamed panes.
        QCOMPARE(tab.report()->models[2].runs[0].tokens, want_c);
        // Streaming and figures together loaded each file exactly once.
        QCOMPARE(counter.loads(kF32), 1);
        QCOMPARE(counter.loads(kQ8), 1);
        QCOMPARE(counter.loads(kQ4), 1);

        // One compare run with one response per model: the first timed
        // pass; the warm-up and the other 4 passes are not logged.
        QCOMPARE(logged_spy.count(), 1);
        const qint64 run = logged_spy.at(0).at(0).toLongLong();
        QCOMPARE(logged_spy.at(0).at(1).toInt(), 3);
        QCOMPARE(logged(db, run), std::make_pair(3, QString("compare")));
    }

    void test_set_run_logs_every_response_and_cancels() {
        const QString jsonl = tmp_.filePath("set.jsonl");
        {
            QFile f(jsonl);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                "{\"id\": \"girl\", \"prompt\": \"Once upon a time, there was a little\", "
                "\"answer\": \"girl\", \"max_tokens\": 8}\n"
                "{\"id\": \"park\", \"prompt\": \"Lily went to the\", \"answer\": \"park\", "
                "\"max_tokens\": 8}\n");
        }
        // The app's run log: the tab writes through its recorder.
        const QString db = tmp_.filePath("runlog2.sqlite");
        wb::gui::RunRecorder recorder;
        QString notice;
        QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
        CompareTab tab;
        LoadCounter counter;
        tab.setModelLoader(counter.loader());
        tab.setRecorder(&recorder);
        tab.setBackend("vulkan");
        tab.addModel(kF32);
        tab.addModel(kQ4);
        tab.setPerplexityContext(128);
        tab.setMaxTokens(8);

        // Cancel right away: the run stops at its first progress point.
        tab.setTestFiles(kData + "/golden/stories260K_ppl_text.txt", jsonl);
        QSignalSpy failed(&tab, &CompareTab::comparisonFailed);
        tab.runTestSet();
        tab.cancel();
        QVERIFY(failed.wait(120000));
        QCOMPARE(failed.at(0).at(0).toString(), QString("cancelled"));
        QVERIFY(!tab.busy());
        QVERIFY(counter.loads(kF32) <= 1 && counter.loads(kQ4) <= 1);

        // Cancel while the panes stream: the prompt run stops too.
        tab.setPrompt("Once upon a time");
        tab.runPrompt();
        tab.cancel();
        QVERIFY(failed.wait(120000));
        QCOMPARE(failed.at(1).at(0).toString(), QString("cancelled"));
        QVERIFY(!tab.busy());

        // Nothing was streamed for a test-set run: run_compare loads each file once.
        counter.reset();
        QSignalSpy report(&tab, &CompareTab::reportReady);
        QSignalSpy logged_spy(&tab, &CompareTab::runLogged);
        tab.runTestSet();
        QVERIFY(report.wait(600000));
        QCOMPARE(counter.loads(kF32), 1);
        QCOMPARE(counter.loads(kQ4), 1);
        const auto* t = tab.table();
        const int ppl = t->rowOf("PPL (llama.cpp chunks, n_ctx 128, 14 chunks");
        QVERIFY2(ppl >= 0, "PPL row names the method and window");
        const double a_ppl = cell(t, ppl, 1).section(' ', 0, 0).toDouble();
        qInfo("PPL A = %.4f (llama-perplexity 4.7437), B = %s", a_ppl, qPrintable(cell(t, ppl, 2)));
        QVERIFY(std::abs(a_ppl / 4.7437 - 1) < 1e-3);
        QVERIFY(t->rowOf("KLD vs A mean") >= 0);
        QVERIFY(cell(t, t->rowOf("KLD vs A mean"), 1).startsWith("0.000000"));
        QVERIFY(t->rowOf("test-set accuracy") >= 0);
        // 2 models x (1 prompt + 2 test items), all under one compare run.
        QCOMPARE(logged_spy.count(), 1);
        QCOMPARE(logged(db, logged_spy.at(0).at(0).toLongLong()),
                 std::make_pair(6, QString("compare")));
    }

    void quantize_dialog_writes_golden_q4_0_and_opens_compare() {
        QString want_sha;
        {
            QFile sums(kData + "/golden/quant/SHA256SUMS");
            QVERIFY(sums.open(QIODevice::ReadOnly));
            for (const QByteArray& l : sums.readAll().split('\n')) {
                if (l.endsWith(" stories260K-q4_0.gguf")) want_sha = QString(l.left(64));
            }
        }
        QCOMPARE(want_sha.size(), 64);
        const QString out = tmp_.filePath("copy-q4_0.gguf");
        wb::ui::QuantizeDialog dlg(kF32);
        dlg.setTarget("q4_0");
        dlg.setPure(true);  // the golden copy was written without llama.cpp's mix (gguf-py)
        dlg.setOutputPath(out);
        QSignalSpy done(&dlg, &wb::ui::QuantizeDialog::finished);
        dlg.start();
        QVERIFY(done.wait(120000));
        QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex()),
                 want_sha);
        // Tensor list: 32 Q4_0, 5 ffn_down kept F16 (rows of 172), 11 norms F32.
        const QTableWidget* t = dlg.tensorTable();
        QCOMPARE(t->rowCount(), 48);
        int q4 = 0, f16 = 0, f32 = 0;
        for (int r = 0; r < t->rowCount(); ++r) {
            const QString to = cell(t, r, 3);
            if (to == "Q4_0") {
                ++q4;
                QVERIFY(cell(t, r, 4).isEmpty());
            } else if (to == "F16") {
                ++f16;
                QVERIFY(cell(t, r, 0).contains("ffn_down"));
                QVERIFY(!cell(t, r, 4).isEmpty());
            } else if (to == "F32") {
                ++f32;
            }
        }
        QCOMPARE(std::make_tuple(q4, f16, f32), std::make_tuple(32, 5, 11));
        QVERIFY(dlg.summaryText().contains("16 of 48 tensors not Q4_0"));

        // "Compare with original" puts both files in Compare panes.
        CompareTab tab;
        QObject::connect(&dlg, &wb::ui::QuantizeDialog::openInCompare, &tab,
                         [&](const QString& a, const QString& b) {
                             tab.addModel(a);
                             tab.addModel(b);
                         });
        auto* btn = dlg.findChild<QPushButton*>("compareWithOriginal");
        QVERIFY(btn && btn->isEnabled());
        QTest::mouseClick(btn, Qt::LeftButton);
        QCOMPARE(tab.panes().size(), size_t(2));
        QCOMPARE(tab.panes()[1]->path(), out);
    }

    // Compare logs through its own connection; History (in the same main
    // window) must list the run's rows as soon as it ends, with nobody
    // typing in its search box.
    void history_lists_compare_run_right_after_it_ends() {
        wb::gui::SettingsStore store(tmp_.filePath("settings-h.ini"));
        wb::gui::RunRecorder recorder;
        QString notice;
        QVERIFY(recorder.open(tmp_.filePath("history-runlog.sqlite"), &notice));
        wb::ui::MainWindow w(&store, &recorder);
        auto* tab = w.findChild<CompareTab*>();
        auto* history = w.findChild<wb::ui::HistoryView*>();
        QVERIFY(tab && history);
        QCOMPARE(history->rowCount(), 0);
        tab->setBackend("vulkan");
        tab->addModel(kF32);
        tab->addModel(kQ4);
        tab->setMaxTokens(4);
        tab->setPrompt("Once upon a time");
        QSignalSpy logged(tab, &CompareTab::runLogged);
        tab->runPrompt();
        QVERIFY(logged.wait(300000));
        QCOMPARE(logged.at(0).at(1).toInt(), 2);  // one response per model
        QTRY_COMPARE_WITH_TIMEOUT(history->rowCount(), 2, 5000);
    }

    void main_window_has_compare_tab_and_quantize_action() {
        wb::gui::SettingsStore store(tmp_.filePath("settings.ini"));
        wb::gui::RunRecorder recorder;
        QString notice;
        QVERIFY(recorder.open(tmp_.filePath("app-runlog.sqlite"), &notice));
        wb::ui::MainWindow w(&store, &recorder);
        QTabWidget* tabs = w.tabs();
        int compare_index = -1;
        for (int i = 0; i < tabs->count(); ++i) {
            if (tabs->tabText(i) == "Compare") compare_index = i;
        }
        QVERIFY(compare_index >= 0);
        const auto* compare = qobject_cast<CompareTab*>(tabs->widget(compare_index));
        QVERIFY(compare != nullptr);
        // One door to the engine: the tab's work is the bridge's compare service.
        QVERIFY(compare->service() != nullptr);
        QCOMPARE(compare->service(), w.bridge()->compareService());
        bool found = false;
        for (QAction* menu : w.menuBar()->actions()) {
            if (!menu->menu()) continue;
            for (QAction* a : menu->menu()->actions()) {
                if (a->text().remove('&') == QStringLiteral("Make quantized copy…")) found = true;
            }
        }
        QVERIFY(found);
    }
};

QTEST_MAIN(TestUiCompare)
#include "test_ui_compare.moc"
