#pragma once
// vk::Buffer: one VkBuffer with its own VkDeviceMemory, counted in the
// Context's accounting under a Purpose. Device-local buffers are filled
// through a staging buffer (upload()); host-visible ones stay mapped.

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "vk/context.h"

namespace wb::vk {

/// Where a buffer lives.
enum class Memory {
    Device,  ///< DEVICE_LOCAL; filled with upload(), read back with download()
    Host,    ///< HOST_VISIBLE | HOST_COHERENT, persistently mapped (inputs, readback, staging)
};

class Buffer {
  public:
    Buffer() = default;
    /// Allocates `bytes` (rounded up to 4; at least 4) as a storage buffer
    /// that can also be a transfer source/destination. Throws vk::Error
    /// (VK_ERROR_OUT_OF_DEVICE_MEMORY, or "no memory type") on failure.
    Buffer(Context& ctx, uint64_t bytes, Memory mem, Purpose purpose);
    ~Buffer();
    Buffer(Buffer&& o) noexcept;
    Buffer& operator=(Buffer&& o) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    VkBuffer handle() const { return buffer_; }
    uint64_t size() const { return size_; }  ///< bytes
    bool valid() const { return buffer_ != VK_NULL_HANDLE; }
    /// Mapped pointer of a Host buffer; nullptr for Device buffers.
    void* mapped() const { return mapped_; }

    /// Copies `bytes` from `src` to byte `offset` of this buffer: memcpy for
    /// Host buffers, a staging buffer + vkCmdCopyBuffer (in chunks of at
    /// most 64 MiB) for Device buffers. Throws std::out_of_range past the end.
    void upload(const void* src, uint64_t bytes, uint64_t offset = 0);
    /// Copies `bytes` from byte `offset` into `dst` (staging for Device).
    void download(void* dst, uint64_t bytes, uint64_t offset = 0) const;
    /// Fills the whole buffer with the 32-bit pattern `word` (vkCmdFillBuffer
    /// for Device buffers), e.g. a NaN to poison outputs in tests.
    void fill(uint32_t word);

  private:
    void release();

    Context* ctx_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    uint64_t size_ = 0;
    Memory mem_ = Memory::Device;
    Purpose purpose_ = Purpose::Activations;
    void* mapped_ = nullptr;
};

}  // namespace wb::vk
