#pragma once
// "Make quantized copy…": writes a Q8_0 / Q4_0 / F16 copy of a GGUF model
// with wb::quant::quantize_file (engine/quant) on a worker thread, with a
// progress bar per tensor and Cancel (the partial file is removed). When
// done it lists every tensor that did not get the chosen type (1-D norms
// kept F32, matrices whose rows are not a multiple of 32 written as F16, as
// the quantizer reports) and offers to open the copy in a Compare pane
// beside the original.

#include <QDialog>
#include <QFutureWatcher>
#include <atomic>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace wb::ui {

class QuantizeDialog : public QDialog {
    Q_OBJECT
  public:
    /// `input`: the GGUF to copy. The output path defaults to
    /// suggestedOutput(input, type, whether input's folder is writable).
    explicit QuantizeDialog(const QString& input, QWidget* parent = nullptr);

    /// Default path of the copy: "<stem>-<type>.gguf" beside `input`, or in
    /// the user's Documents folder (else home) when `input_dir_writable` is
    /// false, e.g. the bundled model installed under /usr/share.
    static QString suggestedOutput(const QString& input, const QString& type,
                                   bool input_dir_writable);
    /// Cancels a running job and waits for it.
    ~QuantizeDialog() override;

    /// "q8_0", "q4_0" or "f16" (case-insensitive); other names are ignored.
    void setTarget(const QString& name);
    void setOutputPath(const QString& path);
    QString outputPath() const;

    /// Tensor table: name, shape, input type, output type, note; one row per
    /// tensor in output order, filled as the run goes.
    QTableWidget* tensorTable() const { return tensors_; }
    /// Summary / error line.
    QString summaryText() const;

  public slots:
    /// Starts writing the copy (no-op while running).
    void start();
    /// Stops the run before the next tensor; no output file is left.
    void cancelRun();

  signals:
    /// The copy was written (true, path) or not (false, reason).
    void finished(bool ok, const QString& message);
    /// The user asked to compare the copy with the original.
    void openInCompare(const QString& original, const QString& copy);

  private:
    void defaultOutput();
    void onTensor(int index, int count, const QString& name, const QString& shape,
                  const QString& from, const QString& to, const QString& note);

    QString input_;
    QComboBox* type_;
    QLineEdit* output_;
    QPushButton* browse_;
    QPushButton* startBtn_;
    QPushButton* cancelBtn_;
    QPushButton* compareBtn_;
    QProgressBar* progress_;
    QLabel* summary_;
    QTableWidget* tensors_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    QFutureWatcher<void> watcher_;
    bool running_ = false;
};

}  // namespace wb::ui
