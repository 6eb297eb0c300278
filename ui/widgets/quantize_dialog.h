#pragma once
// "Make quantized copy…": writes a copy of a GGUF model in any file type the
// quantizer knows (F16, Q8_0, Q6_K, Q5_K_M, Q4_K_M, ..., Q2_K, Q4_0, ...).
// A thin Qt wrapper: the work is a quantize::QuantizeJob (app/quantize, the
// same job `workbench-cli quantize` runs) on a worker thread, with a
// progress bar per tensor and Cancel (the partial file is removed); the
// failure line is chosen by the job's error kind. Each
// tensor's row shows the type chosen and, where it is not the file type's
// main type, the rule (llama.cpp's mix: output at Q6_K, ...; norms kept
// F32; rows a block does not divide fall back). The summary gives the bits
// per weight; the copy can be opened in a Compare pane beside the original.

#include <QDialog>
#include <QFutureWatcher>
#include <memory>

#include "quantize/quantize_job.h"

class QCheckBox;
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

    /// A file type name of quant::all_targets() ("q4_k_m", "q8_0", ...;
    /// case-insensitive); other names are ignored. Default: q4_k_m.
    void setTarget(const QString& name);
    /// llama-quantize --pure: no mix rules (default off).
    void setPure(bool pure);
    void setOutputPath(const QString& path);
    QString outputPath() const;

    /// Tensor table: name, shape, input type, output type, note; one row per
    /// tensor in output order, filled as the run goes.
    QTableWidget* tensorTable() const { return tensors_; }
    /// Summary / error line.
    QString summaryText() const;
    /// The failure line for a job that threw kind `kind` with message
    /// `what` ("Cancelled; no file written.", "Failed: the model is not a
    /// valid GGUF file: …").
    static QString failureText(quantize::ErrorKind kind, const QString& what);

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
    QCheckBox* pure_;
    QLineEdit* output_;
    QPushButton* browse_;
    QPushButton* startBtn_;
    QPushButton* cancelBtn_;
    QPushButton* compareBtn_;
    QProgressBar* progress_;
    QLabel* summary_;
    QLabel* fallback_ = nullptr;     // "every tensor fell back", on its own line when it did
    QLabel* placeholder_ = nullptr;  // what will appear, shown until the first start()
    QTableWidget* tensors_;
    std::shared_ptr<quantize::QuantizeJob>
        job_;  // the running (or last) job; null before the first
    QFutureWatcher<void> watcher_;
    bool running_ = false;
};

}  // namespace wb::ui
