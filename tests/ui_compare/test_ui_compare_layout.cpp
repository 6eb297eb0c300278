// The Compare tab as a new user saw it in the default window (1400x860,
// settings dock and charts beside it) with three models: the reply panes
// were ~3 lines tall, the figure name "PPL (llama.cpp chunks, …)" pushed
// column C off-screen, and the panes' TTFT (all models running at once,
// cold) contradicted the table's (one model at a time): now a pane shows
// its column's figures, said how they were measured. The
// window is the real main window, offscreen; the table holds a hand-made
// report with a text evaluation (figures invented, only their widths
// matter here). A screenshot is written to $WB_BINARY_DIR for a look.

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "compare/compare.h"
#include "desktop/settings_store.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/compare/eval_inputs_dialog.h"
#include "ui/compare/report_table.h"
#include "ui/main_window.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());

// Three models with perplexity and KLD filled in, as after "Run test set…".
wb::compare::CompareReport three_model_report(const QStringList& paths) {
    wb::compare::CompareReport r;
    r.kv_type = "f32";
    r.prompts = {"Once upon a time"};
    r.text_file = "wiki.test.raw";
    r.ppl_ctx = 128;
    r.repetitions = 3;
    const char* types[] = {"F32 x48", "Q8_0 x35, F32 x13", "Q4_0 x35, F32 x13"};
    for (int i = 0; i < paths.size(); ++i) {
        wb::compare::ModelReport m;
        m.path = paths[i].toStdString();
        m.label = std::string(1, char('A' + i));
        m.file_bytes = 1185376;
        m.weight_bytes = 1048576;
        m.kv_bytes = 262144;
        m.n_ctx = 2048;
        m.tensor_types = types[i];
        m.backend = "llvmpipe (LLVM 15.0.6, 256 bits)";
        m.device_bytes = 3 * 1048576;
        m.load_ms = 12.5;
        m.prefill_tps = wb::compare::speed_figure({1234.5, 1100.2, 1300.9});
        m.decode_tps = wb::compare::speed_figure({456.7, 430.1, 470.3});
        m.ttft_ms = wb::compare::speed_figure({6.33, 6.1, 7.45});
        m.e2e_ms = wb::compare::speed_figure({120.5, 118.25, 130.75});
        m.divergence = {std::nullopt};
        wb::compare::PerplexityResult p;
        p.ppl = 1234.5678;
        p.ppl_error = 123.4567;
        p.n_chunks = 4;
        p.n_ctx = 128;
        p.n_scored = 252;
        m.ppl = p;
        wb::compare::KldResult k;
        k.n = 252;
        k.mean = 0.012345;
        k.mean_error = 0.001234;
        k.median = 0.001234;
        k.p99 = 0.123456;
        k.max = 0.234567;
        k.same_top = 250;
        m.kld = k;
        r.models.push_back(m);
    }
    return r;
}

}  // namespace

class UiCompareLayout : public QObject {
    Q_OBJECT
  private slots:
    void paneCaptionsWrap();
    void paneCaptionsFitInTheWindow();
    void testInputNotesUseTheDialogWidth();
    void threeModelsFitTheDefaultWindow();
};

void UiCompareLayout::threeModelsFitTheDefaultWindow() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);  // default size: no saved geometry
    w.setInteractive(false);
    auto* tab = w.findChild<ui::compare::CompareTab*>();
    QVERIFY(tab);
    const QStringList paths{kData + "/models/stories260K.gguf",
                            kData + "/golden/quant/stories260K-q8_0.gguf",
                            kData + "/golden/quant/stories260K-q4_0.gguf"};
    for (const QString& p : paths) tab->addModel(p);
    w.tabs()->setCurrentWidget(tab);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // A real run first (CPU reference, 8 tokens), as the user did: the panes'
    // heights are measured after the figures and per-token view are filled.
    tab->setBackend("cpu");
    tab->setMaxTokens(8);
    QSignalSpy reported(tab, &ui::compare::CompareTab::reportReady);
    tab->runPrompt();
    QTRY_COMPARE_WITH_TIMEOUT(reported.count(), 1, 120000);
    QVERIFY(w.grab().save(QStringLiteral(WB_BINARY_DIR) + "/compare_layout_run.png"));

    // One set of speed figures per model: each pane shows its column's
    // decode and TTFT cells (median (min-max)), said how they were
    // measured, and no timing of its own from the side-by-side stream.
    {
        ui::compare::ReportTable* t = tab->table();
        const int decode = t->rowOf("decode tokens/s");
        const int ttft = t->rowOf("TTFT");
        QVERIFY(decode >= 0 && ttft >= 0);
        const int reps = tab->repetitions();
        for (size_t i = 0; i < tab->panes().size(); ++i) {
            ui::compare::ComparePane* p = tab->panes()[i];
            const QString status = p->statusText();
            const int col = int(i) + 1;
            QVERIFY2(status.contains("decode " + t->item(decode, col)->text() + " tokens/s"),
                     qPrintable(status + " | " + t->item(decode, col)->text()));
            QVERIFY2(status.contains("TTFT " + t->item(ttft, col)->text() + " ms"),
                     qPrintable(status + " | " + t->item(ttft, col)->text()));
            QVERIFY2(status.contains(QString("median (min-max) of %1 timed passes").arg(reps)),
                     qPrintable(status));
            QVERIFY2(!status.contains("side by side"), qPrintable(status));
            QCOMPARE(p->statusLabel()->toolTip(), ui::compare::ComparePane::speedNote(reps));
        }
    }

    tab->table()->setReport(three_model_report(paths));
    const auto hand = three_model_report(paths);
    for (size_t i = 0; i < tab->panes().size(); ++i)
        tab->panes()[i]->showSpeed(hand.models[i], hand.repetitions);
    QTest::qWait(50);  // layout after the report

    const QString shot = QStringLiteral(WB_BINARY_DIR) + "/compare_layout.png";
    QVERIFY(w.grab().save(shot));
    qInfo() << "screenshot" << shot;

    // Every model's column is on screen: the table does not scroll sideways.
    ui::compare::ReportTable* t = tab->table();
    QCOMPARE(t->horizontalScrollBar()->maximum(), 0);
    const int last = t->columnCount() - 1;
    QCOMPARE(last, 3);
    QVERIFY(t->horizontalHeader()->sectionViewportPosition(last) +
                t->horizontalHeader()->sectionSize(last) <=
            t->viewport()->width());

    // The long figure name: capped column, whole name in the tooltip.
    const int ppl = t->rowOf("PPL (llama.cpp chunks");
    QVERIFY(ppl >= 0);
    QVERIFY(t->columnWidth(0) <= t->labelColumnCap());
    QCOMPARE(t->item(ppl, 0)->toolTip(), t->item(ppl, 0)->text());
    QVERIFY(t->item(ppl, 0)->toolTip().contains("252 tokens"));

    // Panes take the height: at least 8 lines of reply each, in the default
    // window and in a 1280x720 laptop screen's.
    for (const QSize size : {w.size(), QSize(1280, 720), QSize(1024, 640)}) {
        w.resize(size);
        QTest::qWait(50);
        for (ui::compare::ComparePane* p : tab->panes()) {
            auto* reply = p->findChild<QPlainTextEdit*>("reply");
            QVERIFY(reply);
            const int lines = reply->viewport()->height() / reply->fontMetrics().lineSpacing();
            qInfo() << "window" << w.size() << "reply lines" << lines;
            QVERIFY2(lines >= 8, qPrintable(QStringLiteral("%1 lines").arg(lines)));
        }
    }
    QVERIFY(w.grab().save(QStringLiteral(WB_BINARY_DIR) + "/compare_layout_720.png"));

    // How the speed was measured: in the panes' and the speed rows' tooltips.
    const QString note = ui::compare::ComparePane::speedNote(3);
    QVERIFY2(note.contains("median (min-max) of 3 timed passes after 1 untimed warm-up pass") &&
                 note.contains("one request at a time"),
             qPrintable(note));
    for (const char* row : {"prefill tokens/s", "decode tokens/s", "TTFT", "e2e"}) {
        const int i = t->rowOf(row);
        QVERIFY2(i >= 0, row);
        QVERIFY2(t->item(i, 0)->toolTip().contains(note), row);
    }
    QCOMPARE(t->item(t->rowOf("decode tokens/s"), 1)->text(), QString("456.7 (430.1-470.3)"));
    // The KV row names what its context is (it read "256.0 KiB @2048").
    QVERIFY2(t->item(t->rowOf("KV cache"), 1)->text().endsWith(" for 2048 tokens"),
             qPrintable(t->item(t->rowOf("KV cache"), 1)->text()));
}

// A pane 220 px wide with a long file name and an error naming a long path:
// both captions wrap to several lines inside the pane instead of widening it
// (which the splitter then clipped), and the text reads the same without
// the wrap points. Hand-made strings, no engine.
void UiCompareLayout::paneCaptionsWrap() {
    const QString name = "tinyllama-1.1b-chat-v1.0.Q4_K_M-imatrix-calibrated.gguf";
    const QString err = "cannot load /home/someone/models/quantized/experiments/2026-11/" + name +
                        ": unsupported tensor type Q4_K in tensor blk.0.attn_q.weight";
    QWidget host;
    auto* pane = new wb::ui::compare::ComparePane("/m/" + name, &host);
    pane->setLabel("B");
    pane->finishReply(err);
    host.resize(220, 400);
    pane->setGeometry(0, 0, 220, 400);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    QCoreApplication::processEvents();
    for (QLabel* l : {pane->titleLabel(), pane->statusLabel()}) {
        QVERIFY(l->wordWrap());
        QVERIFY2(l->width() <= 220, qPrintable(QString::number(l->width())));
        // All of the text fits: the label is as tall as its text at its width.
        QVERIFY2(
            l->height() >= l->heightForWidth(l->width()),
            qPrintable(QString("%1 < %2").arg(l->height()).arg(l->heightForWidth(l->width()))));
    }
    QVERIFY(pane->minimumSizeHint().width() <= 220);
    QVERIFY(pane->statusLabel()->heightForWidth(220) >=
            3 * pane->statusLabel()->fontMetrics().lineSpacing());
    QCOMPARE(pane->statusText(), "error: " + err);
    QCOMPARE(pane->statusLabel()->toolTip(), err);
    QCOMPARE(wb::ui::compare::ComparePane::breakable("short words stay"),
             QString("short words stay"));
    QCOMPARE(wb::ui::compare::ComparePane::breakable("/abcdefghijklmno/pq"),
             QString("/abcdefghijklmno/") + QChar(0x200B) + "pq");
}

// In the main window the panes' timing caption wraps to two lines, but the
// vertical splitter sized the panes from one line: the caption was drawn
// over the reply box, its first and last lines cut. Hand-made timings, no
// engine.
void UiCompareLayout::paneCaptionsFitInTheWindow() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);  // default size: no saved geometry
    w.setInteractive(false);
    auto* tab = w.findChild<ui::compare::CompareTab*>();
    QVERIFY(tab);
    const QStringList paths{kData + "/models/stories260K.gguf",
                            kData + "/golden/quant/stories260K-q8_0.gguf"};
    for (const QString& p : paths) tab->addModel(p);
    w.tabs()->setCurrentWidget(tab);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const auto report = three_model_report(paths);
    tab->table()->setReport(report);  // the figures table takes its rows
    for (const QSize size : {w.size(), QSize(1280, 720)}) {
        w.resize(size);
        for (size_t i = 0; i < tab->panes().size(); ++i)
            tab->panes()[i]->showSpeed(report.models[i], report.repetitions);
        QTest::qWait(50);
        // The user (or a tall figures table) gives the panes as little as
        // the splitter allows.
        auto* vsplit = tab->findChild<QSplitter*>("compareVSplit");
        QVERIFY(vsplit);
        vsplit->setSizes({1, 10000, 10000});
        QTest::qWait(50);
        for (ui::compare::ComparePane* p : tab->panes()) {
            // The short title fits one line and does not keep the height
            // it needed at a narrower width while the window was laid out.
            QLabel* t = p->titleLabel();
            QVERIFY2(t->minimumHeight() < 2 * t->fontMetrics().lineSpacing(),
                     qPrintable(QString("title %1 px tall at width %2")
                                    .arg(t->minimumHeight())
                                    .arg(t->width())));
            QLabel* l = p->statusLabel();
            auto* reply = p->findChild<QPlainTextEdit*>("reply");
            QVERIFY(reply);
            QVERIFY2(l->geometry().top() >= reply->geometry().bottom(),
                     qPrintable(QString("caption top %1 above the reply's bottom %2")
                                    .arg(l->geometry().top())
                                    .arg(reply->geometry().bottom())));
            QVERIFY2(l->heightForWidth(l->width()) > l->fontMetrics().lineSpacing(),
                     "the caption should need two lines at this width for the test to mean much");
            QVERIFY2(l->height() >= l->heightForWidth(l->width()),
                     qPrintable(QString("window %1x%2: caption %3 px tall, its text needs %4")
                                    .arg(w.width())
                                    .arg(w.height())
                                    .arg(l->height())
                                    .arg(l->heightForWidth(l->width()))));
        }
    }
}

// "Run test set…": the notes under each file (what the format is, what the
// file holds) wrapped in a column a third of the dialog wide, leaving the
// rest empty, and the dialog kept the height of that narrow wrap.
void UiCompareLayout::testInputNotesUseTheDialogWidth() {
    ui::compare::EvalInputsDialog d;
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    auto* edit = d.findChild<QLineEdit*>("testText");
    QVERIFY(edit);
    for (QLabel* l : {d.textInfo(), d.testsetInfo()}) {
        QVERIFY2(l->width() >= edit->width(),
                 qPrintable(QString("note %1 px wide, the file field %2 px")
                                .arg(l->width())
                                .arg(edit->width())));
    }
    // Each note is as tall as its text at its width (font metrics), not
    // the height of the narrow wrap, which left blank bands between rows.
    for (QLabel* l : d.findChildren<QLabel*>()) {
        if (!l->wordWrap() || l->text().isEmpty()) continue;
        const int needed =
            l->fontMetrics()
                .boundingRect(QRect(0, 0, l->width(), 100000), Qt::TextWordWrap, l->text())
                .height();
        QVERIFY2(l->height() <= needed + l->fontMetrics().lineSpacing(),
                 qPrintable(QString("note %1 px tall, its text needs %2: %3")
                                .arg(l->height())
                                .arg(needed)
                                .arg(l->text().left(40))));
    }
}

QTEST_MAIN(UiCompareLayout)
#include "test_ui_compare_layout.moc"
