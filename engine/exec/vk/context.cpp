#include "exec/vk/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "exec/vk/error.h"

namespace wb::vk {

const char* purpose_name(Purpose p) {
    switch (p) {
        case Purpose::Weights:
            return "weights";
        case Purpose::KvCache:
            return "kv cache";
        case Purpose::Activations:
            return "activations";
        case Purpose::Staging:
            return "staging";
    }
    return "?";
}

uint64_t MemoryReport::total() const {
    uint64_t t = 0;
    for (uint64_t b : bytes) t += b;
    return t;
}

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

bool layer_available(const char* name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkLayerProperties> layers(n);
    if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
    return std::any_of(layers.begin(), layers.end(), [&](const VkLayerProperties& l) {
        return std::strcmp(l.layerName, name) == 0;
    });
}

/// vkCreateInstance with a message that says what to install when it fails.
VkInstance create_instance(bool validation, bool sync_validation,
                           VkDebugUtilsMessengerCreateInfoEXT* messenger_info) {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "Inference Workbench";
    app.pEngineName = "wb-vk";
    app.apiVersion = VK_API_VERSION_1_2;

    std::vector<const char*> layers;
    std::vector<const char*> exts;
    if (validation) {
        if (!layer_available(kValidationLayer)) {
            throw Error(std::string("validation requested but ") + kValidationLayer +
                            " is not installed (apt-get install vulkan-validationlayers)",
                        VK_ERROR_LAYER_NOT_PRESENT);
        }
        layers.push_back(kValidationLayer);
        exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    VkInstanceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
    ci.ppEnabledLayerNames = layers.data();
    ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
    ci.ppEnabledExtensionNames = exts.data();
    if (validation) ci.pNext = messenger_info;  // also catches instance creation messages
    const VkValidationFeatureEnableEXT sync =
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{};
    if (validation && sync_validation) {
        features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
        features.enabledValidationFeatureCount = 1;
        features.pEnabledValidationFeatures = &sync;
        features.pNext = messenger_info;
        ci.pNext = &features;
        exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
        ci.ppEnabledExtensionNames = exts.data();
    }

    VkInstance inst = VK_NULL_HANDLE;
    const VkResult r = vkCreateInstance(&ci, nullptr, &inst);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED) {
        throw Error(std::string("vkCreateInstance: ") + result_name(r) +
                        " (no usable Vulkan 1.2 driver; install one, e.g. `apt-get install "
                        "mesa-vulkan-drivers` for the CPU device lavapipe)",
                    r);
    }
    check(r, "vkCreateInstance");
    return inst;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance inst) {
    uint32_t n = 0;
    check(vkEnumeratePhysicalDevices(inst, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devs(n);
    check(vkEnumeratePhysicalDevices(inst, &n, devs.data()), "vkEnumeratePhysicalDevices");
    devs.resize(n);
    return devs;
}

std::string cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return std::string(x) + "/inference-workbench";
    if (const char* h = std::getenv("HOME"); h && *h)
        return std::string(h) + "/.cache/inference-workbench";
    return {};
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
    VkInstance inst = create_instance(false, false, nullptr);
    std::vector<DeviceInfo> out;
    try {
        const auto devs = physical_devices(inst);
        for (uint32_t i = 0; i < devs.size(); ++i) out.push_back(query_device_info(devs[i], i));
    } catch (...) {
        vkDestroyInstance(inst, nullptr);
        throw;
    }
    vkDestroyInstance(inst, nullptr);
    return out;
}

std::unique_ptr<Context> Context::create(const ContextOptions& opts_in) {
    std::unique_ptr<Context> ctx(new Context());
    ctx->opts_ = opts_in;
    ContextOptions& opts = ctx->opts_;
    if (env_flag("WB_VK_VALIDATION")) opts.validation = true;
    if (env_flag("WB_VK_SYNC_VALIDATION")) opts.sync_validation = true;

    VkDebugUtilsMessengerCreateInfoEXT mi{};
    if (opts.validation) {
        ctx->validation_ = std::make_unique<ValidationLog>();
        mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
        mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                             VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mi.pfnUserCallback = &ValidationLog::callback;
        mi.pUserData = ctx->validation_.get();
    }
    ctx->instance_ = create_instance(opts.validation, opts.sync_validation, &mi);
    if (opts.validation) {
        auto create_fn = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(ctx->instance_, "vkCreateDebugUtilsMessengerEXT"));
        if (!create_fn)
            throw Error("vkCreateDebugUtilsMessengerEXT not available",
                        VK_ERROR_EXTENSION_NOT_PRESENT);
        check(create_fn(ctx->instance_, &mi, nullptr, &ctx->messenger_),
              "vkCreateDebugUtilsMessengerEXT");
    }

    const auto devs = physical_devices(ctx->instance_);
    std::vector<DeviceInfo> infos;
    for (uint32_t i = 0; i < devs.size(); ++i) infos.push_back(query_device_info(devs[i], i));
    const uint32_t chosen = choose_device(infos, opts.device);
    ctx->physical_ = devs[chosen];
    ctx->info_ = infos[chosen];
    const DeviceInfo& info = ctx->info_;
    if (VK_API_VERSION_MINOR(info.api_version) < 2 && VK_API_VERSION_MAJOR(info.api_version) == 1) {
        throw Error("device " + info.name + " supports Vulkan " + info.api_version_string() +
                        "; the engine needs 1.2",
                    VK_ERROR_INCOMPATIBLE_DRIVER);
    }

    // One queue family with compute; prefer a compute-only family (async
    // compute on discrete GPUs), else any with compute.
    uint32_t n_qf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &n_qf, nullptr);
    std::vector<VkQueueFamilyProperties> qfs(n_qf);
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &n_qf, qfs.data());
    int family = -1;
    for (uint32_t i = 0; i < n_qf; ++i) {
        if ((qfs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && family < 0) family = static_cast<int>(i);
    }
    if (family < 0)
        throw Error("device " + info.name + " has no compute queue", VK_ERROR_FEATURE_NOT_PRESENT);
    ctx->queue_family_ = static_cast<uint32_t>(family);
    if (qfs[ctx->queue_family_].timestampValidBits == 0) ctx->info_.timestamps = false;

    ctx->use16_ = info.storage_16bit && !opts.force_word_access;

    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.storageBuffer16BitAccess = ctx->use16_ ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceFeatures2 feats{};
    feats.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    feats.pNext = &f11;

    std::vector<const char*> dev_exts;
    if (info.memory_budget) dev_exts.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = ctx->queue_family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = &feats;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(dev_exts.size());
    dci.ppEnabledExtensionNames = dev_exts.data();
    check(vkCreateDevice(ctx->physical_, &dci, nullptr, &ctx->device_), "vkCreateDevice");
    vkGetDeviceQueue(ctx->device_, ctx->queue_family_, 0, &ctx->queue_);

    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = ctx->queue_family_;
    check(vkCreateCommandPool(ctx->device_, &pci, nullptr, &ctx->pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    check(vkCreateFence(ctx->device_, &fci, nullptr, &ctx->fence_), "vkCreateFence");

    vkGetPhysicalDeviceMemoryProperties(ctx->physical_, &ctx->mem_props_);

    uint64_t limit = info.max_storage_buffer_range;
    if (info.max_allocation_size) limit = std::min<uint64_t>(limit, info.max_allocation_size);
    if (opts.binding_limit) limit = std::min<uint64_t>(limit, opts.binding_limit);
    ctx->binding_limit_ = limit & ~uint64_t{3};

    // Pipeline cache: the driver checks the header (vendor, device, UUID)
    // itself and ignores data from another device or driver.
    std::vector<char> blob;
    if (opts.pipeline_cache) {
        std::ifstream in(ctx->pipeline_cache_path(), std::ios::binary | std::ios::ate);
        const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : 0;
        if (size > 0) {
            blob.resize(static_cast<size_t>(size));
            in.seekg(0);
            if (!in.read(blob.data(), size)) blob.clear();
        }
    }
    VkPipelineCacheCreateInfo cci{};
    cci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    cci.initialDataSize = blob.size();
    cci.pInitialData = blob.empty() ? nullptr : blob.data();
    if (vkCreatePipelineCache(ctx->device_, &cci, nullptr, &ctx->cache_) != VK_SUCCESS) {
        cci.initialDataSize = 0;  // a corrupt file: start empty rather than fail
        cci.pInitialData = nullptr;
        check(vkCreatePipelineCache(ctx->device_, &cci, nullptr, &ctx->cache_),
              "vkCreatePipelineCache");
    }
    ctx->cache_loaded_bytes_ = cci.initialDataSize;
    return ctx;
}

Context::~Context() {
    if (device_) {
        vkDeviceWaitIdle(device_);
        if (cache_) {
            try {
                save_pipeline_cache();
            } catch (...) {
                // a read-only cache folder must not break shutdown
            }
            vkDestroyPipelineCache(device_, cache_, nullptr);
        }
        if (fence_) vkDestroyFence(device_, fence_, nullptr);
        if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
        vkDestroyDevice(device_, nullptr);
    }
    if (messenger_) {
        auto destroy_fn = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        if (destroy_fn) destroy_fn(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
}

int Context::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
        if ((type_bits & (1u << i)) && (mem_props_.memoryTypes[i].propertyFlags & want) == want)
            return static_cast<int>(i);
    }
    return -1;
}

void Context::account(Purpose p, int64_t bytes) {
    bytes_[static_cast<int>(p)] += bytes;
}

MemoryReport Context::memory_report() const {
    MemoryReport r;
    for (int i = 0; i < kPurposeCount; ++i) r.bytes[i] = static_cast<uint64_t>(bytes_[i].load());
    r.has_budget = info_.memory_budget;
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
    budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    VkPhysicalDeviceMemoryProperties2 mp{};
    mp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
    if (r.has_budget) mp.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(physical_, &mp);
    for (uint32_t i = 0; i < mp.memoryProperties.memoryHeapCount; ++i) {
        HeapBudget h;
        h.size = mp.memoryProperties.memoryHeaps[i].size;
        if (r.has_budget) {
            h.usage = budget.heapUsage[i];
            h.budget = budget.heapBudget[i];
        }
        r.heaps.push_back(h);
    }
    return r;
}

void Context::submit_and_wait(VkCommandBuffer cmd) {
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkResetFences(device_, 1, &fence_), "vkResetFences");
    check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

std::string Context::pipeline_cache_path() const {
    const std::string dir = cache_dir();
    if (dir.empty()) return {};
    char name[128];
    std::snprintf(name, sizeof name, "/pipelines-%04x-%08x.bin", info_.vendor_id,
                  info_.driver_version);
    return dir + name;
}

void Context::save_pipeline_cache() const {
    if (!opts_.pipeline_cache || !cache_) return;
    const std::string path = pipeline_cache_path();
    if (path.empty()) return;
    size_t size = 0;
    if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> blob(size);
    if (vkGetPipelineCacheData(device_, cache_, &size, blob.data()) != VK_SUCCESS) return;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return;
        out.write(blob.data(), static_cast<std::streamsize>(size));
        if (!out) return;
    }
    std::filesystem::rename(tmp, path, ec);  // atomic: readers never see half a file
}

}  // namespace wb::vk
