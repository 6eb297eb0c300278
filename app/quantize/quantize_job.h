#pragma once
// Making a quantized copy of a GGUF model as one job, free of Qt: the
// quantize dialog (ui/widgets/quantize_dialog, a thin Qt wrapper running it on a
// worker thread) and `workbench-cli quantize` both run it. It wraps
// quant::quantize_file (engine/quant/quantize_model.h: llama-quantize's
// tensor order, mix rules and bytes) with per-tensor progress (fraction
// done, tensor name and plan), cancel from any thread, and errors typed by
// what went wrong, so a caller picks its message by kind, not by text.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "errors/errors.h"
#include "quant/file_types.h"
#include "quant/quantize_model.h"

namespace wb::quantize {

/// Why a job failed.
enum class ErrorKind {
    Request,      ///< the job's own inputs: output path equals the input
    InputFile,    ///< the input cannot be opened or read (missing, permission, I/O)
    InputFormat,  ///< the input is read but is not a well-formed GGUF (offset, field named)
    Unsupported,  ///< a tensor type the quantizer cannot dequantize
    Output,       ///< the output cannot be created or written (disk full, no folder)
    Cancelled,    ///< cancel() was called; no output file is left
};

/// "request", "input file", "input format", "unsupported", "output", "cancelled".
const char* to_string(ErrorKind kind);

/// The upper-case name of ggml type id `type` ("Q4_K", "F16"), as the
/// plan's src_type / dst_type are shown (ggml::type_upper_name; an id the
/// type table does not know gives "type#N").
std::string type_upper_name(uint32_t type);

/// What run() throws. what() keeps the underlying message, which names the
/// file and, for a malformed input, the byte offset and field.
using Error = KindError<ErrorKind>;

/// One step of a running job: reported before tensor `index` is written.
struct Progress {
    size_t index = 0;        ///< tensor about to be written, from 0, in output order
    size_t count = 0;        ///< tensors in the output
    double fraction = 0;     ///< share of tensors already written, index / count in [0, 1)
    quant::TensorPlan plan;  ///< that tensor: name, shape, types in and out, rule note
};

/// Called on the thread running the job (the caller of run()).
using ProgressFn = std::function<void(const Progress&)>;

/// What to make.
struct Request {
    std::string input;   ///< the GGUF model to copy
    std::string output;  ///< the file to write (replaced if it exists)
    quant::Target target = quant::Target::Q4_K_M;
    quant::QuantizeOptions options;  ///< pure (no mix rules)
};

/// One quantized copy. Not copyable; run() once per job.
class QuantizeJob {
  public:
    explicit QuantizeJob(Request request) : request_(std::move(request)) {}
    QuantizeJob(const QuantizeJob&) = delete;
    QuantizeJob& operator=(const QuantizeJob&) = delete;

    /// Writes the copy on the calling thread, blocking until it is written
    /// (a few seconds for stories260K, minutes for a 7B model; memory stays
    /// at a few rows). `progress` is called before each tensor. Returns the
    /// report (tensor plans in output order, input and output bytes).
    /// Throws Error: kind Cancelled when cancel() was called (checked
    /// before each tensor), Request, InputFile, InputFormat, Unsupported or
    /// Output as documented on ErrorKind. On any throw no output file is
    /// left behind (a partial one is removed).
    quant::QuantizeReport run(const ProgressFn& progress = {});

    /// Asks a running (or not yet started) job to stop before its next
    /// tensor. Safe from any thread.
    void cancel() { cancel_.store(true); }
    bool cancelRequested() const { return cancel_.load(); }

    const Request& request() const { return request_; }

  private:
    Request request_;
    std::atomic<bool> cancel_{false};
};

}  // namespace wb::quantize
