#include "model/load.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/cpu_exec_model.h"
#include "model/cpu_model.h"
#include "model/model_desc.h"
#include "model/vk_model.h"

namespace wb::model {

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    if (opts.backend != "cpu" && opts.backend != "cpu-ref" && opts.backend != "vulkan") {
        throw std::invalid_argument("unknown backend '" + opts.backend +
                                    "' (expected cpu, cpu-ref or vulkan)");
    }
    // The CPU executor keeps the mapping (weights read in place); the float
    // reference (dequantized to f32) and Vulkan (uploaded) copy the weights,
    // so for them the mapping only lives for the duration of the load.
    gguf::File file = gguf::File::open(path);
    // Same checks for every backend, before any of them allocates: a file
    // without weights or with a misshapen or unknown tensor says so by name.
    (void)ModelDesc::from_gguf(file);
    if (opts.backend == "cpu-ref") return std::make_unique<CpuModel>(file, opts.context);
    if (opts.backend == "cpu") {
        CpuExecOptions co;
        co.threads = opts.threads;
        return std::make_unique<CpuExecModel>(std::move(file), opts.context, co);
    }
    VkModelOptions vo;
    vo.device.device = opts.device;
    return std::make_unique<VkModel>(file, opts.context, vo);
}

}  // namespace wb::model
