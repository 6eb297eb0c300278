#include "runlog/vk_device.h"

#include "vk/context.h"
#include "vk/device_info.h"

namespace wb::runlog {

DeviceInfo describe_vulkan_device(const std::string& selector) {
    const std::vector<vk::DeviceInfo> devices = vk::list_devices();
    const vk::DeviceInfo& d = devices.at(vk::choose_device(devices, selector));
    DeviceInfo out;
    // The same spellings as model::VkModel::device_facts(), so the CLI
    // and the app tag responses from one machine with one environment.
    out.name = d.name;
    out.type = d.type_slug();
    out.driver_name = d.driver_name;
    out.driver_version = d.driver_version_full();
    out.api_version = d.api_version_string();
    return out;
}

}  // namespace wb::runlog
