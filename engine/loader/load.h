#pragma once
// load_model: the one place that turns a GGUF path plus settings into a
// runnable Model on the chosen backend.

#include <memory>
#include <string>

#include "model/model.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

/// What load_model says when asked for "vulkan" in a build configured with
/// -DWB_VULKAN=OFF.
inline constexpr const char* kNoVulkanBackend =
    "this build has no Vulkan backend (configured with -DWB_VULKAN=OFF): use --backend cpu or "
    "cpu-ref, or a build with Vulkan";

/// Whether this build has the Vulkan backend (engine/exec/vk).
bool vulkan_built();

struct LoadOptions {
    /// "cpu" (CpuExecModel: quantized kernels, threaded), "cpu-ref"
    /// (RefModel, the f32 reference the others are tested against) or
    /// "vulkan".
    std::string backend = "cpu";
    /// Threads of the "cpu" backend, the caller's included; 0 = one per physical
    /// core (physical_core_count(), loader/backend_choice.h).
    unsigned threads = 0;
    /// Vulkan device selector: index ("0") or name substring; empty = default choice.
    std::string device;
    ContextParams context;
};

/// Where load_model's time went, in ms (steady clock): the model-side
/// phases of a cold start (the caller adds what it does around them: the
/// file hash of the run log, the first prefill). Pipelines are created on
/// first use, so pipelines_ms and pipelines are read after the first
/// request (add_pipeline_times); until then they are 0.
struct LoadTimings {
    double map_ms = 0.0;     ///< open and mmap the GGUF file
    double parse_ms = 0.0;   ///< header, metadata, tensor infos, tensor checks
    double device_ms = 0.0;  ///< Vulkan instance and device, pipeline-cache file (0 on CPU)
    double upload_ms = 0.0;  ///< weights to the device, KV pool allocated (CPU: weight prep)
    /// Host time blocked on compute pipelines (Vulkan): modules, layouts
    /// and waiting for the driver's compiles, which run on
    /// pipeline_threads worker threads beside the recording (0: in the
    /// caller, one after another; see vk::Kernels::PipelineStats).
    double pipelines_ms = 0.0;
    uint32_t pipelines = 0;             ///< compute pipelines created
    double pipelines_compile_ms = 0.0;  ///< the compiles' own times, summed over threads
    /// Worker threads the compiles could run on at once (0: compiled in
    /// the caller; WB_VK_PIPELINE_THREADS, vk::Kernels).
    uint32_t pipeline_threads = 0;
    /// Bytes the on-disk pipeline cache held for this device at load (0:
    /// every pipeline compiled cold).
    uint64_t pipeline_cache_bytes = 0;
};

/// Sets t.pipelines_ms and t.pipelines from `m`'s pipelines created so far
/// (Vulkan; unchanged for the CPU reference).
void add_pipeline_times(const Model& m, LoadTimings& t);

/// Opens `path`, reads its hyperparameters and builds the model on
/// `opts.backend`. Throws: std::runtime_error when the file cannot be read;
/// gguf::Error for a malformed file or missing/misshapen tensor;
/// ggml::UnsupportedType for a weight type the engine cannot compute with;
/// UnsupportedModel for an architecture or option the engine does not run
/// ("unsupported architecture 'X' ..."); std::invalid_argument for an
/// unknown backend name; std::runtime_error kNoVulkanBackend for "vulkan"
/// in a build without it; for "vulkan", whatever VkModel throws (no Vulkan
/// loader or device, not enough device memory; see vk_model.h). The weight
/// table is checked (ModelDesc::from_gguf) before any backend allocates.
/// For "cpu" and "cpu-ref", OutOfMemoryError "not enough memory for the
/// CPU backend ..." when the KV cache (plus, for cpu-ref, the f32 weights)
/// exceeds host_memory_available(), checked before allocating. For cpu-ref
/// and vulkan, when the file shrinks while the weights are read (another
/// program truncates it), gguf::Error "the file shrank while it was being
/// read" (see gguf::File::check_intact), never SIGBUS; the cpu executor
/// keeps the mapping, whose pages past a truncation read as zeros.
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts);

/// load_model, also telling where the time went (`timings`).
std::unique_ptr<Model> load_model_timed(const std::string& path, const LoadOptions& opts,
                                        LoadTimings& timings);

/// load_model() from a file already opened (the mapping must stay open for
/// the call). Same checks and errors. For "cpu" (which keeps its own
/// mapping) the file is opened again by its path.
std::unique_ptr<Model> load_model_from(const gguf::File& file, const LoadOptions& opts);

}  // namespace wb::model
