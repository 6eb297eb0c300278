#pragma once
// load_model: the one place that turns a GGUF path plus settings into a
// runnable Model on the chosen backend.

#include <memory>
#include <string>

#include "model/model.h"

namespace wb::model {

struct LoadOptions {
    /// "cpu" (CpuExecModel: quantized kernels, threaded), "cpu-ref"
    /// (CpuModel, the f32 reference the others are tested against) or
    /// "vulkan".
    std::string backend = "cpu";
    /// Threads of the "cpu" backend, the caller's included; 0 = hardware threads.
    unsigned threads = 0;
    /// Vulkan device selector: index ("0") or name substring; empty = default choice.
    std::string device;
    ContextParams context;
};

/// Opens `path`, reads its hyperparameters and builds the model on
/// `opts.backend`. Throws: std::runtime_error when the file cannot be read;
/// gguf::Error for a malformed file or missing/misshapen tensor;
/// ggml::UnsupportedType for a weight type the engine cannot compute with;
/// UnsupportedModel for an architecture or option the engine does not run
/// ("unsupported architecture 'X' ..."); std::invalid_argument for an
/// unknown backend name; for "vulkan", whatever VkModel throws (no Vulkan
/// loader or device, not enough device memory; see vk_model.h). The weight
/// table is checked (ModelDesc::from_gguf) before any backend allocates.
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts);

}  // namespace wb::model
