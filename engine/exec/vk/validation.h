#pragma once
// Collects what VK_LAYER_KHRONOS_validation reports through a
// VK_EXT_debug_utils messenger: counts of errors and warnings and the
// messages themselves, so tests can fail on any error.

#include <vulkan/vulkan.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace wb::vk {

/// Thread-safe sink for validation-layer messages.
class ValidationLog {
  public:
    size_t errors() const;
    size_t warnings() const;
    /// Every message so far, "ERROR: ..." / "WARNING: ...".
    std::vector<std::string> messages() const;

    /// The PFN_vkDebugUtilsMessengerCallbackEXT; user data is the log.
    static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* user);

  private:
    mutable std::mutex mu_;
    size_t errors_ = 0;
    size_t warnings_ = 0;
    std::vector<std::string> messages_;
};

}  // namespace wb::vk
