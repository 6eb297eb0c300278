#include "loader/devices.h"

#include <algorithm>
#include <stdexcept>

#include "loader/load.h"
#if WB_HAVE_VULKAN
#include "exec/vk/context.h"
#include "exec/vk/device_info.h"
#include "exec/vk/kernels.h"
#include "exec/vk/vk_memory_plan.h"
#endif

namespace wb::model {

uint64_t GpuDevice::largest_device_local_heap() const {
    uint64_t best = 0;
    for (const DeviceHeap& h : heaps)
        if (h.device_local) best = std::max(best, h.bytes);
    return best;
}

GpuDevice GpuDevice::typical_discrete() {
    GpuDevice g;
    g.name = "typical discrete GPU";
    g.type_name = "discrete GPU";
    return g;
}

GpuDevice GpuDevice::generic(bool cpu_device) {
    GpuDevice g = typical_discrete();
    g.name = cpu_device ? "CPU device" : "GPU";
    g.type_name = cpu_device ? "CPU" : "discrete GPU";
    g.type_slug = cpu_device ? "cpu" : "discrete-gpu";
    g.subgroup_size = 0;  // unknown
    return g;
}

#if WB_HAVE_VULKAN

namespace {

GpuDevice from_vk(const vk::DeviceInfo& d) {
    GpuDevice g;
    g.index = d.index;
    g.name = d.name;
    g.type_name = d.type_name();
    g.type_slug = d.type_slug();
    g.driver_name = d.driver_name;
    g.driver_version = d.driver_version_string();
    g.driver_info = d.driver_info;
    g.api_version = d.api_version_string();
    for (const vk::HeapInfo& h : d.heaps) g.heaps.push_back({h.size, h.device_local});
    g.subgroup_size = d.subgroup_size;
    g.max_workgroup_invocations = d.max_workgroup_invocations;
    g.subgroup_arithmetic = d.subgroup_arithmetic;
    g.max_shared_memory = d.max_shared_memory;
    g.max_storage_buffer_range = d.max_storage_buffer_range;
    g.storage_16bit = d.storage_16bit;
    g.shader_float16 = d.shader_float16;
    g.storage_8bit = d.storage_8bit;
    g.integer_dot_product = d.integer_dot_product;
    g.cooperative_matrix_nv = d.cooperative_matrix_nv;
    g.memory_budget = d.memory_budget;
    g.timestamps = d.timestamps;
    g.timestamp_period_ns = d.timestamp_period_ns;
    return g;
}

/// The vk::DeviceInfo fields device choice and kernel configuration read.
vk::DeviceInfo to_vk(const GpuDevice& g) {
    vk::DeviceInfo d;
    d.index = g.index;
    d.name = g.name;
    d.type = g.type_slug == "discrete-gpu"     ? VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
             : g.type_slug == "integrated-gpu" ? VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
             : g.type_slug == "virtual-gpu"    ? VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU
             : g.type_slug == "cpu"            ? VK_PHYSICAL_DEVICE_TYPE_CPU
                                               : VK_PHYSICAL_DEVICE_TYPE_OTHER;
    d.subgroup_size = g.subgroup_size;
    d.max_workgroup_invocations = g.max_workgroup_invocations;
    return d;
}

}  // namespace

std::vector<GpuDevice> list_gpu_devices() {
    std::vector<GpuDevice> out;
    for (const vk::DeviceInfo& d : vk::list_devices()) out.push_back(from_vk(d));
    return out;
}

uint32_t choose_gpu_device(const std::vector<GpuDevice>& devices, const std::string& selector) {
    std::vector<vk::DeviceInfo> infos;
    for (const GpuDevice& g : devices) infos.push_back(to_vk(g));
    return vk::choose_device(infos, selector);
}

MemoryNeed plan_gpu_memory(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                           const GpuDevice& dev) {
    return plan_memory(d, ctx, shape, vk::Kernels::config_for(to_vk(dev)));
}

uint32_t largest_gpu_context(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                             const GpuDevice& dev, uint64_t budget, uint32_t cap) {
    return largest_context(d, ctx, shape, vk::Kernels::config_for(to_vk(dev)), budget, cap);
}

#else

std::vector<GpuDevice> list_gpu_devices() {
    throw std::runtime_error(kNoVulkanBackend);
}

uint32_t choose_gpu_device(const std::vector<GpuDevice>&, const std::string&) {
    throw std::runtime_error(kNoVulkanBackend);
}

MemoryNeed plan_gpu_memory(const ModelDesc&, const ContextParams&, const PlanShape&,
                           const GpuDevice&) {
    throw std::runtime_error(kNoVulkanBackend);
}

uint32_t largest_gpu_context(const ModelDesc&, const ContextParams&, const PlanShape&,
                             const GpuDevice&, uint64_t, uint32_t) {
    throw std::runtime_error(kNoVulkanBackend);
}

#endif

}  // namespace wb::model
