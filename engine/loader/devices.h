#pragma once
// The Vulkan devices a model can run on, and the Vulkan engine's memory plan
// on one of them, for the surfaces that list devices or plan memory
// (workbench-cli devices / info / plan, the desktop's device picker and
// model bar) without knowing the Vulkan layer (engine/exec/vk). In a build
// without it (-DWB_VULKAN=OFF) every function here throws
// std::runtime_error kNoVulkanBackend (loader/load.h).

#include <cstdint>
#include <string>
#include <vector>

#include "model/memory_plan.h"
#include "model/model_desc.h"

namespace wb::model {

/// One memory heap of a device (VkMemoryHeap).
struct DeviceHeap {
    uint64_t bytes = 0;         ///< heap size
    bool device_local = false;  ///< VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
};

/// One Vulkan device as the surfaces show it (vk::DeviceInfo, flattened to
/// plain values).
struct GpuDevice {
    uint32_t index = 0;     ///< position in vkEnumeratePhysicalDevices: the --device selector
    std::string name;       ///< deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
    std::string type_name;  ///< "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
    /// The run log's spelling: "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu", "other".
    std::string type_slug = "discrete-gpu";
    std::string driver_name;     ///< driverName, e.g. "llvmpipe", "NVIDIA"
    std::string driver_version;  ///< vendor-decoded driverVersion, e.g. "535.104.5"
    std::string driver_info;     ///< driverInfo, e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
    std::string api_version;     ///< "1.3.255"
    std::vector<DeviceHeap> heaps;
    /// Invocations a subgroup runs in lockstep; the kernels' reduction
    /// workgroups follow it. 0: unknown (the smallest choice, 64).
    uint32_t subgroup_size = 32;
    uint32_t max_workgroup_invocations = 1024;  ///< maxComputeWorkGroupInvocations
    // What the engine reads from the device and chooses shader variants by
    // (vk::DeviceInfo); `workbench-cli devices` prints them.
    bool subgroup_arithmetic = false;       ///< subgroupAdd in compute shaders
    uint64_t max_shared_memory = 0;         ///< maxComputeSharedMemorySize, bytes
    uint64_t max_storage_buffer_range = 0;  ///< bytes one storage-buffer binding may span
    bool storage_16bit = false;             ///< storageBuffer16BitAccess
    bool shader_float16 = false;            ///< shaderFloat16
    bool storage_8bit = false;              ///< storageBuffer8BitAccess
    bool integer_dot_product = false;       ///< VK_KHR_shader_integer_dot_product
    bool cooperative_matrix_nv = false;     ///< VK_NV_cooperative_matrix
    bool memory_budget = false;             ///< VK_EXT_memory_budget
    bool timestamps = false;                ///< compute-queue timestamp queries
    double timestamp_period_ns = 0.0;       ///< ns per timestamp tick

    /// A CPU implementation of Vulkan (lavapipe, SwiftShader).
    bool cpu_device() const { return type_slug == "cpu"; }
    /// Bytes of the largest device-local heap; 0 when there is none.
    uint64_t largest_device_local_heap() const;
    /// A typical discrete GPU (subgroups of 32, 1024 invocations a
    /// workgroup) for plans made without a device.
    static GpuDevice typical_discrete();
    /// A device of unknown limits (subgroup size 0), CPU or GPU: what the
    /// desktop's model bar plans for before a device is queried.
    static GpuDevice generic(bool cpu_device);
};

/// Every Vulkan device, without creating a logical device. Throws
/// std::runtime_error: the Vulkan loader or driver is missing (the message
/// says what to install), or kNoVulkanBackend.
std::vector<GpuDevice> list_gpu_devices();

/// The index of the device `selector` picks from `devices` (empty: the
/// first discrete GPU, else integrated, else virtual, else CPU device;
/// digits: that index; else the first name containing it,
/// case-insensitive), as the Vulkan backend picks it. Throws
/// std::runtime_error listing the devices when nothing matches or the list
/// is empty.
uint32_t choose_gpu_device(const std::vector<GpuDevice>& devices, const std::string& selector);

/// Bytes the Vulkan engine allocates for `d` with `ctx` after a ubatch of
/// `shape` on a device like `dev` (plan_memory, exec/vk/vk_memory_plan.h).
/// Throws std::invalid_argument for a KV type or span the device cannot
/// compute; std::runtime_error kNoVulkanBackend.
MemoryNeed plan_gpu_memory(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                           const GpuDevice& dev);

/// Largest n_ctx (a multiple of 256, at most `cap`) whose Vulkan plan on a
/// device like `dev` fits in `budget` bytes; 0 when not even 256 cells fit.
/// Throws std::runtime_error kNoVulkanBackend.
uint32_t largest_gpu_context(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                             const GpuDevice& dev, uint64_t budget, uint32_t cap);

}  // namespace wb::model
