#include "exec/vk/device_info.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "exec/vk/error.h"

namespace wb::vk {

std::string DeviceInfo::type_name() const {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return "discrete GPU";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return "integrated GPU";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return "virtual GPU";
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            return "CPU";
        default:
            return "other";
    }
}

std::string DeviceInfo::api_version_string() const {
    return std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." +
           std::to_string(VK_API_VERSION_MINOR(api_version)) + "." +
           std::to_string(VK_API_VERSION_PATCH(api_version));
}

std::string DeviceInfo::driver_version_string() const {
    const uint32_t v = driver_version;
    if (vendor_id == 0x10DE) {  // NVIDIA packs 10.8.8.6 bits
        return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xFF) + "." +
               std::to_string((v >> 6) & 0xFF);
    }
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string DeviceInfo::driver_version_full() const {
    std::string v = driver_version_string();
    if (!driver_info.empty()) v += " (" + driver_info + ")";
    return v;
}

std::string DeviceInfo::type_slug() const {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return "discrete-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return "integrated-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return "virtual-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            return "cpu";
        default:
            return "other";
    }
}

namespace {

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
    return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

DeviceInfo query_device_info(VkPhysicalDevice dev, uint32_t index) {
    DeviceInfo info;
    info.index = index;

    uint32_t n_ext = 0;
    check(vkEnumerateDeviceExtensionProperties(dev, nullptr, &n_ext, nullptr),
          "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> exts(n_ext);
    check(vkEnumerateDeviceExtensionProperties(dev, nullptr, &n_ext, exts.data()),
          "vkEnumerateDeviceExtensionProperties");

    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDeviceSubgroupProperties subgroup{};
    subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    subgroup.pNext = &driver;
    VkPhysicalDeviceProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(dev, &props);
    const VkPhysicalDeviceProperties& p = props.properties;

    VkPhysicalDeviceMaintenance3Properties maint3{};
    maint3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceProperties2 props_m{};
    props_m.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props_m.pNext = &maint3;
    vkGetPhysicalDeviceProperties2(dev, &props_m);

    info.name = p.deviceName;
    info.type = p.deviceType;
    info.driver_name = driver.driverName;
    info.driver_info = driver.driverInfo;
    info.driver_version = p.driverVersion;
    info.api_version = p.apiVersion;
    info.vendor_id = p.vendorID;
    info.subgroup_size = subgroup.subgroupSize;
    info.subgroup_arithmetic =
        (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
        (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
    info.max_shared_memory = p.limits.maxComputeSharedMemorySize;
    info.max_storage_buffer_range = p.limits.maxStorageBufferRange;
    info.max_texel_buffer_elements = p.limits.maxTexelBufferElements;
    info.max_allocation_size = maint3.maxMemoryAllocationSize;
    info.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; ++i) info.max_workgroup_count[i] = p.limits.maxComputeWorkGroupCount[i];
    info.max_push_constants = p.limits.maxPushConstantsSize;
    info.timestamp_period_ns = p.limits.timestampPeriod;

    uint32_t n_qf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(dev, &n_qf, nullptr);
    std::vector<VkQueueFamilyProperties> qfs(n_qf);
    vkGetPhysicalDeviceQueueFamilyProperties(dev, &n_qf, qfs.data());
    bool compute_ts = false;
    for (const auto& q : qfs) {
        if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) compute_ts = true;
    }
    info.timestamps = p.limits.timestampComputeAndGraphics && compute_ts;

    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(dev, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
        info.heaps.push_back({mem.memoryHeaps[i].size,
                              (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
    }

    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 feats{};
    feats.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    feats.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(dev, &feats);
    info.storage_16bit = f11.storageBuffer16BitAccess;
    info.shader_float16 = f12.shaderFloat16;
    info.storage_8bit = f12.storageBuffer8BitAccess;

    info.integer_dot_product = has_extension(exts, "VK_KHR_shader_integer_dot_product") ||
                               VK_API_VERSION_MINOR(p.apiVersion) >= 3;
    info.cooperative_matrix_nv = has_extension(exts, "VK_NV_cooperative_matrix");
    info.memory_budget = has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    return info;
}

uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& selector) {
    auto list = [&] {
        std::string s;
        for (const auto& d : devices) s += "\n  " + std::to_string(d.index) + ": " + d.name;
        return s;
    };
    if (devices.empty()) {
        throw Error(
            "no Vulkan device found (is a driver installed? try `apt-get install "
            "mesa-vulkan-drivers`)",
            VK_ERROR_INITIALIZATION_FAILED);
    }
    if (selector.empty()) {
        for (VkPhysicalDeviceType t :
             {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
              VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_CPU}) {
            for (const auto& d : devices)
                if (d.type == t) return d.index;
        }
        return devices.front().index;
    }
    if (std::all_of(selector.begin(), selector.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        const unsigned long idx = std::stoul(selector);
        for (const auto& d : devices)
            if (d.index == idx) return d.index;
        throw Error("--device " + selector + ": no device with that index; devices:" + list());
    }
    const std::string want = lower(selector);
    for (const auto& d : devices)
        if (lower(d.name).find(want) != std::string::npos) return d.index;
    throw Error("--device " + selector + ": no device name contains it; devices:" + list());
}

}  // namespace wb::vk
