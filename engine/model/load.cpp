#include "model/load.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/cpu_llama.h"

namespace wb::model {

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    if (opts.backend == "cpu") {
        // CpuLlama copies (dequantizes) the weights, so the mapping can go.
        gguf::File file = gguf::File::open(path);
        return std::make_unique<CpuLlama>(file, opts.context);
    }
    if (opts.backend == "vulkan") {
        // Vulkan branch: construct the Vulkan forward pass here (device
        // chosen by opts.device) once it exists.
        throw std::runtime_error("Vulkan backend not built");
    }
    throw std::invalid_argument("unknown backend '" + opts.backend + "' (expected cpu or vulkan)");
}

}  // namespace wb::model
