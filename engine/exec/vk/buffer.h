#pragma once
// vk::Buffer: one VkBuffer with its own VkDeviceMemory, counted in the
// Context's accounting under a Purpose. Device-local buffers are filled
// through a staging buffer (upload()); host-visible ones stay mapped.

#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "exec/vk/context.h"

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

    /// Texels a 16-byte-texel view of this buffer spans: the buffer's size
    /// in whole texels (every buffer is allocated with its size rounded up
    /// to 16 bytes plus one spare texel, so a shader may read one texel past
    /// its data).
    uint64_t texels() const { return texels_; }
    /// A uniform texel buffer view of the whole buffer with 16-byte texels,
    /// `format` VK_FORMAT_R32G32B32A32_UINT or _SFLOAT (both mandatory for
    /// uniform texel buffers), created on first use and kept with the
    /// buffer. Throws std::invalid_argument for another format or when the
    /// buffer has more texels than the device's maxTexelBufferElements, and
    /// vk::Error when view creation fails.
    VkBufferView texel_view(VkFormat format) const;

  private:
    void release();

    Context* ctx_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    uint64_t size_ = 0;
    Memory mem_ = Memory::Device;
    Purpose purpose_ = Purpose::Activations;
    void* mapped_ = nullptr;
    uint64_t texels_ = 0;
    mutable std::array<VkBufferView, 2> views_{};  ///< RGBA32UI, RGBA32F
};

}  // namespace wb::vk
