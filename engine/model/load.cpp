#include "model/load.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/cpu_model.h"
#include "model/model_desc.h"
#include "model/vk_model.h"

namespace wb::model {

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    if (opts.backend != "cpu" && opts.backend != "vulkan") {
        throw std::invalid_argument("unknown backend '" + opts.backend +
                                    "' (expected cpu or vulkan)");
    }
    // Both backends copy the weights (CPU: dequantized to f32; Vulkan:
    // uploaded), so the mapping only lives for the duration of the load.
    const gguf::File file = gguf::File::open(path);
    // Same checks for every backend, before any of them allocates: a file
    // without weights or with a misshapen or unknown tensor says so by name.
    (void)ModelDesc::from_gguf(file);
    if (opts.backend == "cpu") return std::make_unique<CpuModel>(file, opts.context);
    VkModelOptions vo;
    vo.device.device = opts.device;
    return std::make_unique<VkModel>(file, opts.context, vo);
}

}  // namespace wb::model
