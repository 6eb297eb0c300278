#pragma once
// Which backend runs a model when the user has not chosen one: the default
// follows the hardware. With a real GPU among the Vulkan devices
// (discrete, integrated, virtual or other), Vulkan; when every Vulkan
// device is a CPU device (lavapipe/llvmpipe, SwiftShader) or there is none,
// the threaded CPU executor ("cpu") with one thread per physical core,
// which is faster there than Vulkan on an emulated GPU.
//
// choose_default_backend() is pure (tests feed it hand-built device
// lists); detect_default_backend() asks the Vulkan loader and this machine.

#include <filesystem>
#include <string>
#include <vector>

namespace wb::model {

/// One Vulkan device as the default choice sees it.
struct DeviceSummary {
    std::string name;  ///< deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
    /// The run log's spelling of VkPhysicalDeviceType (vk::DeviceInfo::type_slug):
    /// "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu" or "other".
    std::string type;
};

/// The default backend and why.
struct BackendChoice {
    std::string backend;  ///< "vulkan" or "cpu" (a model::LoadOptions::backend name)
    /// Threads the CPU backend runs with (physical cores, at least 1); set
    /// whichever backend is chosen, so a caller can show "CPU (N threads)".
    unsigned threads = 1;
    /// One sentence for the user, e.g. "no GPU found: the only Vulkan
    /// device, llvmpipe (LLVM 15.0.6, 256 bits), is a CPU device; the CPU
    /// backend is faster there".
    std::string reason;
};

/// Chooses the default backend from the Vulkan devices present.
/// Inputs: `devices` in vkEnumeratePhysicalDevices order (may be empty);
/// `physical_cores` (0 is taken as 1); `vulkan_error`, when Vulkan could
/// not be asked at all (no loader or driver), the error text, which the
/// reason quotes. Output: "vulkan" when any device's type is not "cpu"
/// (the reason names the device vk::choose_device picks: first discrete,
/// else integrated, else virtual, else other); otherwise "cpu", the reason
/// naming the CPU devices or saying that there is none. `threads` is
/// max(physical_cores, 1) in both cases. Pure; never throws (but
/// std::bad_alloc).
BackendChoice choose_default_backend(const std::vector<DeviceSummary>& devices,
                                     unsigned physical_cores, const std::string& vulkan_error = {});

/// Physical cores described under `cpu_dir` (a folder laid out like
/// /sys/devices/system/cpu): the number of distinct (physical_package_id,
/// core_id) pairs read from cpu<N>/topology/. Returns 0 when none can be
/// read (folder missing, files unreadable or not numbers). Never throws.
unsigned physical_cores_in(const std::filesystem::path& cpu_dir);

/// Physical cores of this machine: physical_cores_in("/sys/devices/system/cpu"),
/// falling back to std::thread::hardware_concurrency() when that gives 0,
/// and to 1 when both do. Never throws.
unsigned physical_core_count();

/// choose_default_backend() for this machine: lists the Vulkan devices
/// (vk::list_devices; a failure, such as no Vulkan loader, counts as no
/// device and its message goes into the reason) and counts physical cores.
/// Creates and destroys one Vulkan instance; never throws (but std::bad_alloc).
BackendChoice detect_default_backend();

}  // namespace wb::model
