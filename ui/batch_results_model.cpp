#include "ui/batch_results_model.h"

namespace wb::ui {

namespace {

QString ms(double v) {
    return v < 0 ? QStringLiteral("—") : QString::number(v, 'f', 1);
}

QString one_line(const QString& s, int max) {
    QString t = s;
    t.replace('\n', ' ');
    return t.size() > max ? t.left(max) + QStringLiteral("…") : t;
}

}  // namespace

int BatchResultsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int BatchResultsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kColumns;
}

QVariant BatchResultsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_.size()) return {};
    const gui::RequestResult& r = rows_[index.row()];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case Id:
                return r.id;
            case Prompt:
                return one_line(r.prompt, 60);
            case Output:
                return one_line(r.output, 120);
            case Finish:
                return r.finish_reason;
            case QueueWait:
                return ms(r.queue_wait_ms);
            case Ttft:
                return ms(r.ttft_ms);
            case Tpot:
                return ms(r.tpot_ms);
            case E2e:
                return ms(r.e2e_ms);
            case Tokens:
                return r.generated_tokens;
            case Cached:
                return r.prompt_cached_tokens < 0 ? QString()
                                                  : QStringLiteral("%1/%2")
                                                        .arg(r.prompt_cached_tokens)
                                                        .arg(r.prompt_tokens);
            default:
                return {};
        }
    }
    if (role == Qt::UserRole) {
        switch (index.column()) {
            case Id:
                return r.id;
            case Prompt:
                return r.prompt;
            case Output:
                return r.output;
            case Finish:
                return r.finish_reason;
            case QueueWait:
                return r.queue_wait_ms;
            case Ttft:
                return r.ttft_ms;
            case Tpot:
                return r.tpot_ms;
            case E2e:
                return r.e2e_ms;
            case Tokens:
                return r.generated_tokens;
            case Cached:
                return r.prompt_cached_tokens;
            default:
                return {};
        }
    }
    if (role == Qt::ToolTipRole && (index.column() == Prompt || index.column() == Output))
        return index.column() == Prompt ? r.prompt : r.output;
    if (role == Qt::TextAlignmentRole && index.column() >= QueueWait)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant BatchResultsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || section < 0 || section >= kColumns) return {};
    // Short titles keep the numeric columns narrow; the tooltip says what each is.
    static const char* const names[kColumns] = {"id",        "prompt",    "output",    "finish",
                                                "wait (ms)", "TTFT (ms)", "TPOT (ms)", "e2e (ms)",
                                                "tokens",    "cached"};
    static const char* const tips[kColumns] = {
        "the prompt set's id",
        "the prompt (hover a cell for all of it)",
        "the response (hover a cell for all of it; double-click the row for details)",
        "stop, length (max tokens), context (the context size), timeout, cancelled, rejected "
        "or error",
        "queue wait: submission until a scheduler slot took the request (ms)",
        "time to first token: submission until the first generated token (ms)",
        "time per output token after the first (ms)",
        "end to end: submission until the last token (ms)",
        "tokens generated",
        "prompt tokens taken from the prefix cache / all prompt tokens: a prompt prefix "
        "another request computed (a shared system prompt) is reused, not computed again"};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

void BatchResultsModel::append(const gui::RequestResult& r) {
    const int row = static_cast<int>(rows_.size());
    beginInsertRows({}, row, row);
    rows_.append(r);
    endInsertRows();
}

void BatchResultsModel::clear() {
    beginResetModel();
    rows_.clear();
    endResetModel();
}

}  // namespace wb::ui
