#pragma once
// What a Vulkan physical device can do, read from the driver (never
// assumed): the facts `workbench-cli devices` prints and the engine picks
// pipeline variants from.

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace wb::vk {

/// One memory heap of a device.
struct HeapInfo {
    uint64_t size = 0;          ///< bytes
    bool device_local = false;  ///< VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
};

/// Capabilities and limits of one physical device.
struct DeviceInfo {
    uint32_t index = 0;  ///< position in vkEnumeratePhysicalDevices
    std::string name;    ///< deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
    VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
    std::string driver_name;      ///< VkPhysicalDeviceDriverProperties::driverName
    std::string driver_info;      ///< ... ::driverInfo (e.g. "Mesa 22.3.6 (LLVM 15.0.6)")
    uint32_t driver_version = 0;  ///< raw driverVersion (vendor-specific encoding)
    uint32_t api_version = 0;     ///< VK_MAKE_API_VERSION packed
    uint32_t vendor_id = 0;
    std::vector<HeapInfo> heaps;

    uint32_t subgroup_size = 0;  ///< VkPhysicalDeviceSubgroupProperties
    /// subgroupAdd & co. in compute shaders (VkPhysicalDeviceSubgroupProperties:
    /// supportedStages has COMPUTE, supportedOperations has ARITHMETIC).
    bool subgroup_arithmetic = false;
    uint32_t max_shared_memory = 0;         ///< maxComputeSharedMemorySize, bytes
    uint32_t max_storage_buffer_range = 0;  ///< bytes one storage-buffer binding may span
    uint32_t max_texel_buffer_elements =
        0;  ///< maxTexelBufferElements: texels one texel-buffer view may span
    uint64_t max_allocation_size = 0;        ///< maxMemoryAllocationSize, bytes
    uint32_t max_workgroup_invocations = 0;  ///< maxComputeWorkGroupInvocations
    uint32_t max_workgroup_count[3] = {0, 0, 0};
    uint32_t max_push_constants = 0;   ///< bytes
    float timestamp_period_ns = 0.0f;  ///< ns per timestamp tick
    bool timestamps = false;  ///< timestampComputeAndGraphics and a compute queue with valid bits

    bool storage_16bit = false;          ///< storageBuffer16BitAccess
    bool shader_float16 = false;         ///< shaderFloat16
    bool storage_8bit = false;           ///< storageBuffer8BitAccess
    bool integer_dot_product = false;    ///< VK_KHR_shader_integer_dot_product (or core 1.3)
    bool cooperative_matrix_nv = false;  ///< VK_NV_cooperative_matrix
    bool memory_budget = false;          ///< VK_EXT_memory_budget

    /// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
    std::string type_name() const;
    /// "1.3.230"
    std::string api_version_string() const;
    /// Driver version decoded the way the vendor encodes it (NVIDIA:
    /// 10.8.8.6 bits; others: Vulkan's major.minor.patch).
    std::string driver_version_string() const;
    /// driver_version_string() plus " (driverInfo)" when the driver gives
    /// one: "22.3.6 (Mesa 22.3.6 (LLVM 15.0.6))". The run log's spelling.
    std::string driver_version_full() const;
    /// "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu", "other": the
    /// run log's spelling of the type (type_name() is the display one).
    std::string type_slug() const;
};

/// Reads every fact above for `dev`. `index` is copied into the result.
DeviceInfo query_device_info(VkPhysicalDevice dev, uint32_t index);

/// Picks a device: `selector` empty -> first discrete GPU, else first
/// integrated, else first virtual, else first CPU device (lavapipe), else
/// index 0; all digits -> that index; otherwise the first device whose
/// name contains `selector` (case-insensitive). Throws vk::Error listing
/// the devices when nothing matches or `devices` is empty.
uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& selector);

}  // namespace wb::vk
