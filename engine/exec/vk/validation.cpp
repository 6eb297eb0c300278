#include "exec/vk/validation.h"

namespace wb::vk {

size_t ValidationLog::errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
}

size_t ValidationLog::warnings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return warnings_;
}

std::vector<std::string> ValidationLog::messages() const {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
}

VKAPI_ATTR VkBool32 VKAPI_CALL ValidationLog::callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT /*types*/,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* log = static_cast<ValidationLog*>(user);
    const std::string text = data && data->pMessage ? data->pMessage : "(no message)";
    std::lock_guard<std::mutex> lock(log->mu_);
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        ++log->errors_;
        log->messages_.push_back("ERROR: " + text);
    } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        ++log->warnings_;
        log->messages_.push_back("WARNING: " + text);
    }
    return VK_FALSE;  // never abort the call: the test decides
}

}  // namespace wb::vk
