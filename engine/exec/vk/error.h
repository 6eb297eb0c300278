#pragma once
// Vulkan errors as C++ exceptions. Every vk* call that returns a VkResult
// goes through check(), so a failure names the call and the result code
// (VK_ERROR_OUT_OF_DEVICE_MEMORY, ...) instead of crashing later.

#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

#include "errors/errors.h"

namespace wb::vk {

/// A failed Vulkan call or an unusable device. what() reads
/// "<call>: <VK_RESULT_NAME>[: hint]". Its kind() is OutOfMemory for
/// VK_ERROR_OUT_OF_DEVICE_MEMORY / VK_ERROR_OUT_OF_HOST_MEMORY, Device
/// otherwise.
class Error : public wb::DeviceError {
  public:
    Error(const std::string& what, VkResult result = VK_ERROR_UNKNOWN)
        : wb::DeviceError(
              what, result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY
                        ? wb::ErrorKind::OutOfMemory
                        : wb::ErrorKind::Device),
          result_(result) {}
    VkResult result() const { return result_; }

  private:
    VkResult result_;
};

/// Spelling of a VkResult as in the spec ("VK_ERROR_INCOMPATIBLE_DRIVER").
const char* result_name(VkResult r);

/// Throws Error("<call>: <name>") unless r is VK_SUCCESS (VK_INCOMPLETE is
/// accepted too: enumeration calls that return it are re-queried).
void check(VkResult r, const char* call);

}  // namespace wb::vk
