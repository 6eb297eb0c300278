#pragma once
// The machine and build a response was produced on. Host facts come from
// /etc/os-release (os-release(5)), uname(2) and /proc/cpuinfo; the Vulkan
// device facts come from the caller (the engine's vk::Context reads them
// from VkPhysicalDeviceProperties / VkPhysicalDeviceDriverProperties).

#include <string>

#include "model/device_facts.h"

namespace wb::runlog {

/// One environment row. Two responses share a row when every field is equal.
struct EnvironmentInfo {
    std::string app_version;  ///< WB_VERSION ("0.1.0")
    std::string git_commit;   ///< WB_GIT_COMMIT (12 hex digits or "unknown")
    std::string os;      ///< PRETTY_NAME from /etc/os-release ("Debian GNU/Linux 12 (bookworm)")
    std::string kernel;  ///< "Linux 6.1.0-18-amd64 x86_64" (uname sysname release machine)
    std::string cpu;     ///< "model name" of /proc/cpuinfo ("AMD EPYC 7B13"), "unknown" if absent
    /// backend "vulkan" or "cpu"; for "cpu" every other field is "" (the
    /// Model's own report, model::Model::device_facts()).
    model::DeviceFacts device;
};

/// Fills app version and commit (wb_version.h) and the host facts, then
/// sets `device`. Missing files give "unknown" fields, never an
/// exception. Throws std::invalid_argument if device.backend is not
/// "vulkan" or "cpu".
EnvironmentInfo collect_environment(const model::DeviceFacts& device);
/// collect_environment() of a device known only by its backend ("cpu").
EnvironmentInfo collect_environment(const std::string& backend);

/// PRETTY_NAME of os-release text (the file's contents), unquoted per
/// os-release(5) shell-style quoting; "" if absent.
std::string os_pretty_name(const std::string& os_release_text);

/// First "model name" value of /proc/cpuinfo text; "" if absent.
std::string cpu_model_name(const std::string& cpuinfo_text);

}  // namespace wb::runlog
