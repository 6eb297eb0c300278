#include "exec/vk/error.h"

namespace wb::vk {

const char* result_name(VkResult r) {
    switch (r) {
#define WB_VK_NAME(x) \
    case x:           \
        return #x;
        WB_VK_NAME(VK_SUCCESS)
        WB_VK_NAME(VK_NOT_READY)
        WB_VK_NAME(VK_TIMEOUT)
        WB_VK_NAME(VK_EVENT_SET)
        WB_VK_NAME(VK_EVENT_RESET)
        WB_VK_NAME(VK_INCOMPLETE)
        WB_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
        WB_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        WB_VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
        WB_VK_NAME(VK_ERROR_DEVICE_LOST)
        WB_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
        WB_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
        WB_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
        WB_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
        WB_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
        WB_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
        WB_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
        WB_VK_NAME(VK_ERROR_FRAGMENTED_POOL)
        WB_VK_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
        WB_VK_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        WB_VK_NAME(VK_ERROR_FRAGMENTATION)
        WB_VK_NAME(VK_ERROR_UNKNOWN)
#undef WB_VK_NAME
        default:
            return "VK_RESULT_UNKNOWN_CODE";
    }
}

void check(VkResult r, const char* call) {
    if (r == VK_SUCCESS || r == VK_INCOMPLETE) return;
    throw Error(std::string(call) + ": " + result_name(r), r);
}

}  // namespace wb::vk
