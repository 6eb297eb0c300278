#include "runlog/vk_device.h"

#include "vk/context.h"
#include "vk/device_info.h"

namespace wb::runlog {

DeviceInfo describe_vulkan_device(const std::string& selector) {
    const std::vector<vk::DeviceInfo> devices = vk::list_devices();
    const vk::DeviceInfo& d = devices.at(vk::choose_device(devices, selector));
    DeviceInfo out;
    out.name = d.name;
    switch (d.type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            out.type = "discrete-gpu";
            break;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            out.type = "integrated-gpu";
            break;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            out.type = "virtual-gpu";
            break;
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            out.type = "cpu";
            break;
        default:
            out.type = "other";
            break;
    }
    out.driver_name = d.driver_name;
    out.driver_version = d.driver_version_string();
    if (!d.driver_info.empty()) out.driver_version += " (" + d.driver_info + ")";
    out.api_version = d.api_version_string();
    return out;
}

}  // namespace wb::runlog
