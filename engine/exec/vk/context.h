#pragma once
// vk::Context: one Vulkan instance, the chosen physical device, a logical
// device with one compute queue, a command pool, the on-disk pipeline cache
// and the engine's memory accounting. Everything else in engine/exec/vk borrows
// a Context&; the Context must outlive it.

#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/vk/device_info.h"
#include "exec/vk/validation.h"

namespace wb::vk {

/// How the engine's allocations are grouped in memory reports.
enum class Purpose { Weights = 0, KvCache, Activations, Staging };
inline constexpr int kPurposeCount = 4;
/// "weights", "kv cache", "activations", "staging".
const char* purpose_name(Purpose p);

/// Settings for Context::create.
struct ContextOptions {
    std::string device;  ///< --device: index or name substring; empty = default choice
    bool validation =
        false;  ///< enable VK_LAYER_KHRONOS_validation + messenger (also env WB_VK_VALIDATION=1)
    /// Largest range bound to one storage-buffer descriptor, bytes; 0 = the
    /// device's maxStorageBufferRange. Tests lower it to force weights to be
    /// split into pieces.
    uint64_t binding_limit = 0;
    /// Ignore 16-bit storage and read quant blocks as uint32 words (the
    /// variant for devices without it); tests use this to cover both.
    bool force_word_access = false;
    bool pipeline_cache = true;  ///< load/save the pipeline cache on disk
    /// Choose kernels as for a GPU even on a CPU device (shared-memory
    /// mat x vec, the tiled mat x mat past 8 tokens, Group attention with
    /// split-K for few heads over long spans); tests use this to run the
    /// GPU paths of the whole forward pass on lavapipe. Loop-limit splits
    /// (Kernels::plan_attention) still apply.
    bool gpu_kernels = false;
    /// With validation: also the layer's synchronization validation
    /// (VK_EXT_validation_features), which reports read-after-write and
    /// other hazards a missing barrier leaves (also env WB_VK_SYNC_VALIDATION=1).
    bool sync_validation = false;
};

/// Heap usage and budget from VK_EXT_memory_budget.
struct HeapBudget {
    uint64_t size = 0;    ///< bytes
    uint64_t usage = 0;   ///< bytes in use by this process (driver's figure)
    uint64_t budget = 0;  ///< bytes this process may use (driver's estimate)
};

/// The engine's own accounting plus the driver's view where it exists.
struct MemoryReport {
    std::array<uint64_t, kPurposeCount> bytes{};  ///< live bytes per Purpose
    uint64_t total() const;
    bool has_budget = false;        ///< the device has VK_EXT_memory_budget
    std::vector<HeapBudget> heaps;  ///< per heap; usage/budget 0 without the extension
};

/// Lists every physical device without creating a logical device. Throws
/// vk::Error with a hint when the loader or a driver is missing.
std::vector<DeviceInfo> list_devices();

class Context {
  public:
    /// Creates instance (API 1.2), picks a device (see choose_device),
    /// creates a logical device with a compute queue and the features the
    /// shaders may use. Throws vk::Error: "vkCreateInstance:
    /// VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver; try `apt-get install
    /// mesa-vulkan-drivers`)", "no Vulkan device found", a bad --device,
    /// a device without a compute queue, or validation requested but the
    /// layer missing.
    static std::unique_ptr<Context> create(const ContextOptions& opts = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const DeviceInfo& info() const { return info_; }
    const ContextOptions& options() const { return opts_; }
    VkInstance instance() const { return instance_; }
    VkPhysicalDevice physical() const { return physical_; }
    VkDevice device() const { return device_; }
    VkQueue queue() const { return queue_; }
    uint32_t queue_family() const { return queue_family_; }
    VkCommandPool command_pool() const { return pool_; }
    VkPipelineCache pipeline_cache() const { return cache_; }

    /// Bytes one storage-buffer descriptor may span: min(binding_limit,
    /// maxStorageBufferRange, maxMemoryAllocationSize), rounded down to 4.
    uint64_t binding_limit() const { return binding_limit_; }
    /// Quant weights are read as uint16 (16-bit storage) rather than uint32 words.
    bool use_16bit_storage() const { return use16_; }

    /// Validation log; nullptr when validation is off.
    const ValidationLog* validation() const { return validation_ ? validation_.get() : nullptr; }

    /// Index of a memory type with all of `want` among `type_bits`, or -1.
    int find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const;

    /// Accounting hooks used by Buffer (bytes may be negative on free).
    void account(Purpose p, int64_t bytes);
    MemoryReport memory_report() const;

    /// Submits one command buffer and waits for it on a fence (the one
    /// wait per ubatch). Throws vk::Error on failure or device loss.
    void submit_and_wait(VkCommandBuffer cmd);

    /// Writes the pipeline cache to disk now (also done by the destructor).
    void save_pipeline_cache() const;
    /// Path of the pipeline-cache file: $XDG_CACHE_HOME or ~/.cache,
    /// then inference-workbench/pipelines-<vendor id>-<driver version>.bin (the
    /// driver itself rejects data from another device).
    std::string pipeline_cache_path() const;
    /// Bytes read from the pipeline-cache file at creation (0: none, so
    /// every pipeline is compiled cold; the driver may still reject data
    /// from another driver version).
    uint64_t pipeline_cache_loaded_bytes() const { return cache_loaded_bytes_; }

  private:
    Context() = default;

    ContextOptions opts_;
    DeviceInfo info_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    std::unique_ptr<ValidationLog> validation_;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkPipelineCache cache_ = VK_NULL_HANDLE;
    uint64_t cache_loaded_bytes_ = 0;
    VkPhysicalDeviceMemoryProperties mem_props_{};
    uint64_t binding_limit_ = 0;
    bool use16_ = false;
    std::array<std::atomic<int64_t>, kPurposeCount> bytes_{};
};

}  // namespace wb::vk
