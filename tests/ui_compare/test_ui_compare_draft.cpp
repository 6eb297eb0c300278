// A Compare pane may be "target + draft" (speculative decoding,
// docs/speculative.md), offscreen on the CPU backend with stories260K:
//  - stream_reply with an n-gram draft returns plain stream_reply's greedy
//    tokens, with stats (drafted >= accepted > 0 on repeated text);
//  - in the tab, a pane with the n-gram draft picked gets, after the
//    figures, a speed line "with draft n-gram ...: decode X tokens/s,
//    acceptance Y% (a of d drafted)" whose rate is a / d worked out here;
//    a pane without a draft gets none.

#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <atomic>

#include "common/data_dir.h"
#include "compare/compare_jobs.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/widgets/draft_picker.h"

using wb::ui::compare::CompareTab;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";
const QString kPrompt = "Lily had a red ball. Lily had a red ball. Lily had a red ball. Lily had";

wb::model::LoadOptions cpu() {
    wb::model::LoadOptions lo;
    lo.backend = "cpu";
    return lo;
}

}  // namespace

class TestUiCompareDraft : public QObject {
    Q_OBJECT
  private slots:
    void stream_reply_with_draft_keeps_the_greedy_tokens() {
        const std::atomic<bool> cancel{false};
        const auto plain = wb::compare::stream_reply(kModel.toStdString(), kPrompt.toStdString(),
                                                     40, cpu(), {}, {}, cancel);
        QVERIFY2(plain.error.empty(), plain.error.c_str());
        QVERIFY(plain.speculative.drafter.empty());
        wb::compare::StreamDraft d;
        d.params.kind = wb::scheduler::SpeculativeParams::Kind::Ngram;
        d.params.k = 4;
        // A fixed k: the adaptive one follows measured pass times, so how
        // many drafts it makes (and whether one is accepted) varies by run.
        d.params.adaptive = false;
        const auto spec = wb::compare::stream_reply(kModel.toStdString(), kPrompt.toStdString(), 40,
                                                    cpu(), {}, {}, cancel, d);
        QVERIFY2(spec.error.empty(), spec.error.c_str());
        QCOMPARE(spec.run.tokens, plain.run.tokens);
        QCOMPARE(QString::fromStdString(spec.speculative.drafter), QString("ngram"));
        QVERIFY(spec.speculative.accepted > 0);
        QVERIFY(spec.speculative.drafted >= spec.speculative.accepted);
        // Every decode pass emits its kept draft tokens plus one of its own.
        QCOMPARE(int(spec.run.tokens.size()) - 1,
                 spec.speculative.target_passes + spec.speculative.accepted);
    }

    void target_plus_draft_pane_shows_speed_and_acceptance() {
        CompareTab tab;
        tab.setBackend("cpu");
        tab.setRepetitions(1);
        tab.addModel(kModel);
        tab.addModel(kModel);
        tab.setPrompt(kPrompt);
        tab.setMaxTokens(40);
        tab.resize(1200, 800);
        tab.show();
        wb::ui::DraftPicker* picker = tab.panes()[1]->draftPicker();
        picker->setChoice({"ngram", 4, {}});
        QCOMPARE(tab.panes()[1]->draft().params.kind,
                 wb::scheduler::SpeculativeParams::Kind::Ngram);

        const QRegularExpression re(
            "with draft n-gram \\(run alone after the figures\\): decode ([0-9.]+) tokens/s, "
            "acceptance ([0-9.]+)% \\(([0-9]+) of ([0-9]+) drafted\\), ([0-9.]+) accepted per "
            "target pass");
        // The pane drafts as `generate --draft` does, with an adaptive k
        // that follows measured pass times: a run may draft too little to
        // have one accepted (seen: 0 of 5), so up to three runs are made
        // until one is.
        QString a, b;
        QRegularExpressionMatch m;
        for (int attempt = 0; attempt < 3; ++attempt) {
            QSignalSpy report(&tab, &CompareTab::reportReady);
            QSignalSpy drafts(&tab, &CompareTab::draftSpeedsReady);
            QSignalSpy failed(&tab, &CompareTab::comparisonFailed);
            tab.runPrompt();
            QVERIFY(
                QTest::qWaitFor([&] { return !drafts.isEmpty() || !failed.isEmpty(); }, 300000));
            QCOMPARE(failed.count(), 0);
            QCOMPARE(report.count(), 1);
            QCOMPARE(tab.panes()[1]->tokens(), tab.panes()[0]->tokens());
            a = tab.panes()[0]->statusText();
            b = tab.panes()[1]->statusText();
            qInfo("A: %s\nB: %s", qPrintable(a), qPrintable(b));
            QVERIFY(!a.contains("with draft"));
            m = re.match(b);
            QVERIFY2(m.hasMatch(), qPrintable(b));
            if (m.captured(3).toInt() > 0) break;
        }
        QVERIFY(m.captured(1).toDouble() > 0);
        const int accepted = m.captured(3).toInt();
        const int drafted = m.captured(4).toInt();
        QVERIFY(accepted > 0);
        QVERIFY(drafted >= accepted);
        QCOMPARE(m.captured(2), QString::number(100.0 * accepted / drafted, 'f', 1));
        // The plain figures stay on the pane's first line, as for any pane.
        QVERIFY2(b.contains("tokens/s, prefill"), qPrintable(b));
        QVERIFY(
            tab.panes()[1]->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_compare_draft.png"));
    }
};

QTEST_MAIN(TestUiCompareDraft)
#include "test_ui_compare_draft.moc"
