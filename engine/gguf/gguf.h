#pragma once
// GGUF reader (ggml/docs/gguf.md, versions 2 and 3, little-endian).
//
// Nothing in the file is trusted: every count, length, dimension and offset
// is checked against the bytes that remain and against 64-bit overflow
// before it is used, so a truncated or hostile file ends in a gguf::Error
// that names the field and its byte offset, never a crash or a huge
// allocation. Tensor data is not copied: it is read through an mmap
// guarded against the file shrinking meanwhile (mapped_file.h, check_intact()).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "errors/errors.h"
#include "gguf/mapped_file.h"
#include "gguf/value.h"

namespace wb::gguf {

/// A malformed or unsupported GGUF file. what() reads
/// "<path>: offset <N>: <field>: <problem>" (offset omitted when none applies).
class Error : public wb::FormatError {
  public:
    Error(const std::string& path, std::optional<uint64_t> offset, const std::string& field,
          const std::string& problem);
    std::optional<uint64_t> offset() const { return offset_; }
    const std::string& field() const { return field_; }

  private:
    std::optional<uint64_t> offset_;
    std::string field_;
};

/// Largest number of dimensions a ggml tensor has (GGML_MAX_DIMS).
inline constexpr uint32_t kMaxDims = 4;
/// Alignment of tensor data when `general.alignment` is absent.
inline constexpr uint32_t kDefaultAlignment = 32;
/// Largest `general.alignment` accepted (64 KiB, a large page). GGUF files
/// use 32; a value such as 0x80000000 would make the data offset and
/// every writer's padding absurd.
inline constexpr uint32_t kMaxAlignment = 65536;

/// One tensor's info. `ne` is in ggml order: ne[0] is the contiguous row
/// length (the input dimension of a weight matrix); unused dims are 1.
struct TensorInfo {
    std::string name;
    uint32_t type = 0;  ///< ggml type id (see ggml/types.h)
    uint32_t n_dims = 0;
    std::array<uint64_t, kMaxDims> ne{1, 1, 1, 1};
    uint64_t offset = 0;            ///< bytes from the start of the data section
    uint64_t nbytes = 0;            ///< bytes of data
    uint64_t info_offset = 0;       ///< file offset of this tensor's info (for messages)
    const uint8_t* data = nullptr;  ///< points into the mapping; valid while the File lives

    uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    uint64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
    /// "[64, 512]"-style shape in ggml order.
    std::string shape_string() const;
};

/// An opened GGUF file: header, metadata in file order, tensor infos.
class File {
  public:
    /// Maps and parses `path`. Throws gguf::Error for a malformed or
    /// unsupported file (also when its metadata would take more than
    /// 256 MiB of memory, or general.alignment is above kMaxAlignment) and
    /// std::runtime_error when it cannot be read or is not a regular file.
    /// `map_ms` (optional) gets the time the mapping took (ms, steady
    /// clock); the rest of the call is the parse.
    static File open(const std::string& path, double* map_ms = nullptr);

    /// Throws gguf::Error ("the file shrank while it was being read ...",
    /// with the offset) when a read of the mapping since open() found the
    /// file truncated by another program; those reads returned zeros, not
    /// the file's bytes (see mapped_file.h). Call it after reading tensor
    /// data (load_model and the quantizer do) before trusting the result.
    void check_intact() const;

    File(File&&) noexcept = default;
    File& operator=(File&&) noexcept = default;

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t file_size() const { return map_.size(); }
    uint32_t alignment() const { return alignment_; }
    /// File offset where the (aligned) tensor data section starts.
    uint64_t data_offset() const { return data_offset_; }

    /// Metadata keys in file order with their values.
    const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
    /// The value of `key`, or nullptr if absent.
    const Value* find(std::string_view key) const;

    /// Typed lookups. Absent key: nullopt. Present with an incompatible type:
    /// throws gguf::Error naming the key and both types.
    std::optional<int64_t> get_int(std::string_view key) const;
    std::optional<double> get_float(std::string_view key) const;
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string> get_string(std::string_view key) const;
    /// Array value of `key` whose elements have type `elem` (read them from
    /// the matching Value::array_* vector); nullptr if absent; throws
    /// gguf::Error if present with another type.
    const Value* get_array(std::string_view key, ValueType elem) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    /// Tensor called `name`, or nullptr.
    const TensorInfo* find_tensor(std::string_view name) const;
    /// Tensor called `name`; throws gguf::Error ("missing tensor") if absent.
    const TensorInfo& tensor(std::string_view name) const;

  private:
    File() = default;

    std::string path_;
    MappedFile map_;
    uint32_t version_ = 0;
    uint32_t alignment_ = kDefaultAlignment;
    uint64_t data_offset_ = 0;
    std::vector<std::pair<std::string, Value>> kv_;
    std::unordered_map<std::string, size_t> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::unordered_map<std::string, size_t> tensor_index_;

    friend class Parser;
};

}  // namespace wb::gguf
