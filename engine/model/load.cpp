#include "model/load.h"

#include <chrono>
#include <stdexcept>

#include "gguf/gguf.h"
#include "model/cpu_exec_model.h"
#include "model/cpu_model.h"
#include "model/model_desc.h"
#include "model/vk_model.h"

namespace wb::model {

void add_pipeline_times(const Model& m, LoadTimings& t) {
    if (const auto* vk = dynamic_cast<const VkModel*>(&m)) {
        t.pipelines_ms = vk->pipeline_stats().create_ms;
        t.pipelines = vk->pipeline_stats().created;
    }
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    LoadTimings ignored;
    return load_model_timed(path, opts, ignored);
}

std::unique_ptr<Model> load_model_timed(const std::string& path, const LoadOptions& opts,
                                        LoadTimings& timings) {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    if (opts.backend != "cpu" && opts.backend != "cpu-ref" && opts.backend != "vulkan") {
        throw std::invalid_argument("unknown backend '" + opts.backend +
                                    "' (expected cpu, cpu-ref or vulkan)");
    }
    LoadTimings t;
    const Clock::time_point t0 = Clock::now();
    // The CPU executor keeps the mapping (weights read in place); the float
    // reference (dequantized to f32) and Vulkan (uploaded) copy the weights,
    // so for them the mapping only lives for the duration of the load.
    gguf::File file = gguf::File::open(path, &t.map_ms);
    // Same checks for every backend, before any of them allocates: a file
    // without weights or with a misshapen or unknown tensor says so by name.
    (void)ModelDesc::from_gguf(file);
    const Clock::time_point t1 = Clock::now();
    t.parse_ms = ms(t0, t1) - t.map_ms;
    std::unique_ptr<Model> m;
    if (opts.backend == "cpu-ref") {
        m = std::make_unique<CpuModel>(file, opts.context);
        t.upload_ms = ms(t1, Clock::now());
    } else if (opts.backend == "cpu") {
        CpuExecOptions co;
        co.threads = opts.threads;
        m = std::make_unique<CpuExecModel>(std::move(file), opts.context, co);
        t.upload_ms = ms(t1, Clock::now());
    } else {
        VkModelOptions vo;
        vo.device.device = opts.device;
        auto vk = std::make_unique<VkModel>(file, opts.context, vo);
        t.device_ms = vk->load_times().device_ms;
        t.upload_ms = vk->load_times().upload_ms;
        t.pipeline_cache_bytes = vk->pipeline_cache_loaded_bytes();
        m = std::move(vk);
    }
    add_pipeline_times(*m, t);
    timings = t;
    return m;
}

}  // namespace wb::model
