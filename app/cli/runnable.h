#pragma once
// Whether this engine can run a GGUF file, and if not, why: the checks the
// loader makes (architecture and its options, tokenizer, tensor types, the
// weight table), run one by one so that every reason is listed instead of
// only the first the loader would throw. `workbench-cli info` prints the
// verdict before any memory figure.

#include <string>
#include <vector>

namespace wb::gguf {
class File;
}

namespace wb::cli {

/// The verdict for one file.
struct RunVerdict {
    /// Why the engine cannot run the file at all, one line each, naming
    /// the field or tensor ("architecture: unsupported architecture 'mamba'
    /// (general.architecture); ...", "tokenizer: unsupported tokenizer model
    /// 'bert' ...", "tensor type: IQ4_NL in 1 tensor (blk.0.attn_q.weight);
    /// supported: ..."). Empty when it can.
    std::vector<std::string> reasons;
    /// Why the Vulkan engine cannot run it though the CPU reference can
    /// (a type only the CPU reference computes with). Empty otherwise.
    std::vector<std::string> vulkan_reasons;

    bool runs_cpu() const { return reasons.empty(); }
    bool runs_vulkan() const { return reasons.empty() && vulkan_reasons.empty(); }
};

/// Checks `f` (an open GGUF file) the way model::load_model would, without
/// allocating or reading tensor data. Never throws for what the file holds:
/// every problem becomes a reason.
RunVerdict check_runnable(const gguf::File& f);

/// The verdict as `info` prints it, naming the --backend values that can
/// run the file: "yes, on --backend cpu (threaded, quantized kernels),
/// cpu-ref (f32 reference) and vulkan", "on --backend cpu (...) and cpu-ref
/// (...) only; not on vulkan:" followed by the Vulkan reasons, or "no, this
/// engine cannot run it:" followed by the reasons; one reason per line,
/// each line after the first indented by `indent`. Never throws except
/// std::bad_alloc.
std::string verdict_text(const RunVerdict& v, const std::string& indent);

}  // namespace wb::cli
