#pragma once
// The machine and build a response was produced on. Host facts come from
// /etc/os-release (os-release(5)), uname(2) and /proc/cpuinfo; the Vulkan
// device facts come from the caller (the engine's vk::Context reads them
// from VkPhysicalDeviceProperties / VkPhysicalDeviceDriverProperties).

#include <string>

namespace wb::runlog {

/// Vulkan device facts, as the Vulkan layer reports them. All "" for the
/// CPU reference backend.
struct DeviceInfo {
    std::string
        name;  ///< VkPhysicalDeviceProperties::deviceName ("llvmpipe (LLVM 15.0.6, 256 bits)")
    std::string type;  ///< "discrete-gpu" | "integrated-gpu" | "virtual-gpu" | "cpu" | "other"
    std::string
        driver_name;  ///< VkPhysicalDeviceDriverProperties::driverName ("llvmpipe", "NVIDIA")
    std::string driver_version;  ///< decoded driver version ("580.65.6") or driverInfo
    std::string api_version;     ///< "1.3.255" (VK_API_VERSION_MAJOR/MINOR/PATCH of apiVersion)
};

/// One environment row. Two responses share a row when every field is equal.
struct EnvironmentInfo {
    std::string app_version;  ///< WB_VERSION ("0.1.0")
    std::string git_commit;   ///< WB_GIT_COMMIT (12 hex digits or "unknown")
    std::string os;       ///< PRETTY_NAME from /etc/os-release ("Debian GNU/Linux 12 (bookworm)")
    std::string kernel;   ///< "Linux 6.1.0-18-amd64 x86_64" (uname sysname release machine)
    std::string cpu;      ///< "model name" of /proc/cpuinfo ("AMD EPYC 7B13"), "unknown" if absent
    std::string backend;  ///< "vulkan" or "cpu" (the CPU reference forward pass)
    DeviceInfo device;    ///< empty for backend "cpu"
};

/// Fills app version and commit (wb_version.h) and the host facts, then
/// sets `backend` and `device`. Missing files give "unknown" fields, never
/// an exception. Throws std::invalid_argument if backend is not "vulkan"
/// or "cpu".
EnvironmentInfo collect_environment(const std::string& backend, const DeviceInfo& device = {});

/// PRETTY_NAME of os-release text (the file's contents), unquoted per
/// os-release(5) shell-style quoting; "" if absent.
std::string os_pretty_name(const std::string& os_release_text);

/// First "model name" value of /proc/cpuinfo text; "" if absent.
std::string cpu_model_name(const std::string& cpuinfo_text);

}  // namespace wb::runlog
