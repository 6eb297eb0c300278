#pragma once
// One model's pane in the Compare tab: the GGUF path (label "A" = the
// reference, "B", "C"... variants), a Remove button, and the reply that
// streams in token by token while the model generates on a worker thread.
// A remote pane (setRemote) is an OpenAI-compatible endpoint instead of a
// file: its greedy reply streams through the endpoint's completions API,
// timed on the client, and its text is compared with A's.

#include <QString>
#include <QWidget>
#include <cstdint>
#include <optional>
#include <vector>

#include "compare/compare_jobs.h"
#include "cost/price.h"
#include "desktop/remote_target.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace wb::compare {
struct ModelReport;
}
namespace wb::load {
struct RequestResult;
}

namespace wb::ui {
class DraftPicker;
}

namespace wb::ui::compare {

class ComparePane : public QWidget {
    Q_OBJECT
  public:
    /// `path`: the GGUF file this pane runs.
    explicit ComparePane(const QString& path, QWidget* parent = nullptr);

    /// The GGUF path, or a remote pane's base URL.
    QString path() const { return path_; }

    /// Makes this a remote endpoint's pane: `target` names it (the title is
    /// its label), `api_key` ("" = none) is kept in memory for its runs
    /// only. The draft picker is hidden (the endpoint decodes as it does).
    void setRemote(const gui::RemoteTarget& target, const QString& api_key);
    bool isRemote() const { return remote_.has_value(); }
    /// The endpoint (meaningful when isRemote()).
    gui::RemoteTarget remote() const { return remote_.value_or(gui::RemoteTarget{}); }
    QString apiKey() const { return apiKey_; }
    /// A remote reply's finish line: tokens and where the count came from,
    /// client-side TTFT and e2e (ms), the model the endpoint ran, and
    /// `versus_a` (how its text compares with A's); or its error.
    void showRemoteResult(const wb::load::RequestResult& r, const QString& versus_a);
    /// "A" for the reference, "B", "C"... for variants (set by the tab).
    void setLabel(const QString& label);
    QString label() const { return label_; }

    /// Clears the reply before a run and shows "loading…".
    void startReply();
    /// Appends one generated token (id, its text piece) to the reply.
    void appendToken(int32_t id, const QString& piece);
    /// Shows the finish line under the reply: the token count, or `error`
    /// when it is not empty. No timing: the replies stream side by side,
    /// so their times would mix the models' work; the speed figures come
    /// later from showSpeed().
    void finishReply(const QString& error);
    /// Adds the model's speed figures to the finish line: decode and
    /// prefill tokens/s and TTFT (ms), each the median (min-max) of `m`'s
    /// timed passes, the same figures as the table's column for this model
    /// (wb::compare::ModelReport, app/compare/compare.h). The tooltip is
    /// speedNote(repetitions).
    void showSpeed(const wb::compare::ModelReport& m, uint32_t repetitions);
    /// Adds the cost of one pass of the prompt on this model at `price`
    /// (cost::Figures from compare::model_cost): per request, per 1k
    /// requests and per M output tokens in the price's currency; the
    /// formula is in the line's tooltip. Call after showSpeed().
    void showCost(const wb::cost::Figures& c, const wb::cost::Price& price);
    /// The cost line ("" before showCost()).
    QString costText() const { return costText_; }
    /// How the speed figures were measured (compare::speed_method), for the
    /// panes' and the figures table's tooltips.
    static QString speedNote(uint32_t repetitions);
    /// `text` with a zero-width space (U+200B) after separators (/ backslash _ - . ,
    /// : =) of runs of 16 or more non-space characters, and every 48
    /// characters of a run without one, so a QLabel can wrap a path or an
    /// identifier instead of growing to its width.
    static QString breakable(const QString& text);
    /// The caption labels (tests: they wrap within the pane's width).
    QLabel* titleLabel() const { return title_; }
    QLabel* statusLabel() const { return status_; }
    /// The finish line under the reply (token count and timing, or error).
    QString statusText() const;

    /// Token ids streamed so far in this run, [n_generated].
    const std::vector<int32_t>& tokens() const { return tokens_; }
    /// Text pieces of tokens(), [n_generated].
    const QStringList& pieces() const { return pieces_; }
    /// The reply text as shown.
    QString replyText() const;
    /// Enables / disables the Remove button (off while a run is going).
    void setRemovable(bool on);

    /// The pane's draft (a "target + draft" pane): none, n-gram or a draft
    /// model file, and k. Its reply and figures are the target's own; its
    /// speculative decode speed is measured after the figures (the tab runs
    /// the reply again, alone, with the draft) and shown by showDraftSpeed.
    DraftPicker* draftPicker() const { return draft_; }
    /// What stream_reply should draft with (Kind None when the pane has no draft).
    wb::compare::StreamDraft draft() const;
    /// Appends the speculative run's line to the finish line: decode
    /// tokens/s with the draft, acceptance rate (accepted / drafted) and
    /// accepted tokens per target pass; or its error.
    void showDraftSpeed(const wb::compare::StreamResult& r);

  signals:
    void removeRequested(wb::ui::compare::ComparePane* pane);

  private:
    QString path_;
    QString label_;
    std::optional<gui::RemoteTarget> remote_;
    QString apiKey_;
    QLabel* title_;
    QLabel* status_;
    QPlainTextEdit* reply_;
    QPushButton* remove_;
    DraftPicker* draft_;
    QString costText_;
    std::vector<int32_t> tokens_;  // [n_generated] ids of this run
    QStringList pieces_;           // [n_generated] their text
};

}  // namespace wb::ui::compare
