#pragma once
// The Vulkan device facts of an environment row, read from the driver
// through the engine's vk layer (engine/vk/device_info.h) with the same
// device choice the model loader makes (vk::choose_device).

#include <string>

#include "runlog/environment.h"

namespace wb::runlog {

/// DeviceInfo of the device that `selector` (LoadOptions::device: "" =
/// default choice, digits = index, else a name substring) picks: name,
/// type ("discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu", "other"),
/// driver name + version (vendor encoding + driverInfo) and API version.
/// Throws vk::Error when there is no Vulkan driver or no match.
DeviceInfo describe_vulkan_device(const std::string& selector);

}  // namespace wb::runlog
