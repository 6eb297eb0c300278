#include "model/load.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/cpu_llama.h"
#include "model/vk_llama.h"

namespace wb::model {

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    if (opts.backend == "cpu") {
        // CpuLlama copies (dequantizes) the weights, so the mapping can go.
        gguf::File file = gguf::File::open(path);
        return std::make_unique<CpuLlama>(file, opts.context);
    }
    if (opts.backend == "vulkan") {
        // Weights are uploaded to the device, so the mapping can go too.
        gguf::File file = gguf::File::open(path);
        VkLlamaOptions vo;
        vo.device.device = opts.device;
        return std::make_unique<VkLlama>(file, opts.context, vo);
    }
    throw std::invalid_argument("unknown backend '" + opts.backend + "' (expected cpu or vulkan)");
}

}  // namespace wb::model
