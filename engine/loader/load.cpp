#include "loader/load.h"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

#include "errors/errors.h"
#include "exec/cpu/cpu_exec_model.h"
#include "exec/ref/ref_model.h"
#include "gguf/gguf.h"
#include "loader/backend_choice.h"
#include "model/host_memory.h"
#include "model/model_desc.h"
#if WB_HAVE_VULKAN
#include "exec/vk/vk_model.h"
#endif

namespace wb::model {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

void check_backend(const LoadOptions& opts) {
    if (opts.backend != "cpu" && opts.backend != "cpu-ref" && opts.backend != "vulkan") {
        throw std::invalid_argument("unknown backend '" + opts.backend +
                                    "' (expected cpu, cpu-ref or vulkan)");
    }
#if !WB_HAVE_VULKAN
    if (opts.backend == "vulkan") throw std::runtime_error(kNoVulkanBackend);
#endif
}

// Host memory the CPU backends allocate: an f32 KV cache of 2 * n_layer *
// n_ctx * kv_dim values, plus every weight as f32 for the reference
// (cpu-ref; the executor reads the weights in place from the mapping).
// Checked against the memory the process may still take before anything
// is allocated (-c 16777216 tried to allocate about 20 GiB).
void check_cpu_memory(const gguf::File& file, const HParams& hp, const LoadOptions& opts) {
    uint64_t weights = 0;
    if (opts.backend == "cpu-ref")
        for (const gguf::TensorInfo& t : file.tensors()) weights += t.n_elements() * sizeof(float);
    const uint64_t kv = 2ull * hp.n_layer * opts.context.n_ctx * hp.kv_dim() * sizeof(float);
    const std::optional<HostMemory> avail = host_memory_available();
    if (!avail || weights + kv <= avail->bytes) return;
    throw OutOfMemoryError(
        "not enough memory for the CPU backend: it needs " + format_bytes(weights + kv) + " (" +
        (weights ? format_bytes(weights) + " of f32 weights, " : std::string()) + format_bytes(kv) +
        " of KV cache for " + std::to_string(opts.context.n_ctx) + " cells) but only " +
        format_bytes(avail->bytes) + " is available (" + avail->source +
        "); lower -c (and --concurrency for batch and bench)");
}

// The backends that copy the weights out of the file: the float reference
// (dequantized to f32) and Vulkan (uploaded). The mapping only has to live
// for this call. Fills t's device, upload and pipeline-cache figures.
std::unique_ptr<Model> load_copying(const gguf::File& file, const ModelDesc& desc,
                                    const LoadOptions& opts, LoadTimings& t) {
    std::unique_ptr<Model> m;
    if (opts.backend == "cpu-ref") {
        check_cpu_memory(file, desc.hp, opts);
        const Clock::time_point t0 = Clock::now();
        m = std::make_unique<RefModel>(file, opts.context);
        t.upload_ms = ms_between(t0, Clock::now());
    } else {
#if WB_HAVE_VULKAN
        VkModelOptions vo;
        vo.device.device = opts.device;
        auto vk = std::make_unique<VkModel>(file, opts.context, vo);
        t.device_ms = vk->load_times().device_ms;
        t.upload_ms = vk->load_times().upload_ms;
        t.pipeline_cache_bytes = vk->pipeline_cache_loaded_bytes();
        m = std::move(vk);
#else
        throw std::runtime_error(kNoVulkanBackend);
#endif
    }
    // Every weight was read; if the file shrank meanwhile, some were zeros.
    file.check_intact();
    return m;
}

}  // namespace

bool vulkan_built() {
    return WB_HAVE_VULKAN != 0;
}

void add_pipeline_times([[maybe_unused]] const Model& m, [[maybe_unused]] LoadTimings& t) {
#if WB_HAVE_VULKAN
    if (const auto* vk = dynamic_cast<const VkModel*>(&m)) {
        const vk::Kernels::PipelineStats s = vk->pipeline_stats();
        t.pipelines_ms = s.create_ms;
        t.pipelines = s.created;
        t.pipelines_compile_ms = s.compile_ms;
        t.pipeline_threads = s.compile_threads;
    }
#endif
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
    LoadTimings ignored;
    return load_model_timed(path, opts, ignored);
}

std::unique_ptr<Model> load_model_timed(const std::string& path, const LoadOptions& opts,
                                        LoadTimings& timings) {
    check_backend(opts);
    LoadTimings t;
    const Clock::time_point t0 = Clock::now();
    gguf::File file = gguf::File::open(path, &t.map_ms);
    // Same checks for every backend, before any of them allocates: a file
    // without weights or with a misshapen or unknown tensor says so by name.
    const ModelDesc desc = ModelDesc::from_gguf(file);
    const Clock::time_point t1 = Clock::now();
    t.parse_ms = ms_between(t0, t1) - t.map_ms;
    std::unique_ptr<Model> m;
    if (opts.backend == "cpu") {
        // The CPU executor keeps the mapping (weights read in place; the
        // mapping stays guarded against truncation, see mapped_file.h).
        check_cpu_memory(file, desc.hp, opts);
        CpuExecOptions co;
        co.threads = opts.threads != 0 ? opts.threads : physical_core_count();
        m = std::make_unique<CpuExecModel>(std::move(file), opts.context, co);
        t.upload_ms = ms_between(t1, Clock::now());
    } else {
        m = load_copying(file, desc, opts, t);
    }
    add_pipeline_times(*m, t);
    timings = t;
    return m;
}

std::unique_ptr<Model> load_model_from(const gguf::File& file, const LoadOptions& opts) {
    check_backend(opts);
    if (opts.backend == "cpu") return load_model(file.path(), opts);
    const ModelDesc desc = ModelDesc::from_gguf(file);
    LoadTimings ignored;
    return load_copying(file, desc, opts, ignored);
}

}  // namespace wb::model
