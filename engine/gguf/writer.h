#pragma once
// GGUF v3 writer (ggml/docs/gguf.md), the counterpart of gguf::File.
//
// Layout written, as ggml's gguf_write and gguf-py's GGUFWriter do:
//   header (magic "GGUF", u32 version 3, u64 n_tensors, u64 n_kv)
//   n_kv metadata pairs (string key, u32 value type, value)
//   n_tensors tensor infos (string name, u32 n_dims, u64 ne[n_dims],
//                           u32 ggml type, u64 offset from the data start)
//   zero padding to the alignment
//   tensor data, each tensor padded with zeros to the alignment (the last
//   one too, so the file length is a multiple of the alignment).
// The alignment is `general.alignment` when that key is set, else 32.
//
// Tensor data is streamed: the header is written once every tensor's type
// and shape is known (sizes follow from them), then the caller appends each
// tensor's bytes in declaration order, in as many pieces as it likes, so a
// 7B model is never held in memory.

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/value.h"

namespace wb::gguf {

/// Misuse of the writer (data for a tensor beyond its size, finish() with
/// tensors missing, a key set twice...) or an I/O failure. what() names the
/// file and, where one applies, the key or tensor.
class WriteError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Streams one GGUF v3 file to disk. Call order:
///   set_kv()*  add_tensor()*  write_header()  write_tensor_data()*  finish()
/// The file is written to `path`; on any exception before finish() the
/// partial file is removed by the destructor so no half-written model is
/// left looking valid.
class Writer {
  public:
    /// Opens `path` for writing (truncates). Throws WriteError when it
    /// cannot be created.
    explicit Writer(std::string path);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    /// Sets metadata `key` to `value`. A key already set keeps its place
    /// in the order and gets the new value (as ggml's gguf_set_kv does); a
    /// new key is appended. `general.alignment` must be an unsigned integer,
    /// a power of two (GGUF spec); otherwise throws WriteError. Only before
    /// write_header().
    void set_kv(std::string key, Value value);

    /// Declares the next tensor: `name`, ggml type id, `n_dims` (1..4) and
    /// `ne` in ggml order (ne[0] = row length; unused dims 1). Its byte size
    /// follows from type and shape (ggml::row_bytes); throws WriteError when
    /// ne[0] is not a multiple of the type's block size, the type is unknown,
    /// or the name repeats. Returns that byte size. Only before
    /// write_header().
    uint64_t add_tensor(std::string name, uint32_t type, uint32_t n_dims,
                        const std::array<uint64_t, 4>& ne);

    /// Writes header, metadata, tensor infos and the padding before the data.
    void write_header();

    /// Appends `n` bytes of tensor data. Bytes go to the current tensor (the
    /// first one not yet complete, in add_tensor order); a piece may not run
    /// past the end of the current tensor (WriteError naming it). When a
    /// tensor completes, its alignment padding is written.
    void write_tensor_data(const void* data, size_t n);

    /// Checks every tensor got all its bytes, flushes and closes. Throws
    /// WriteError naming the first incomplete tensor, or on an I/O error.
    void finish();

    /// Alignment in bytes in effect (32 unless general.alignment is set).
    uint32_t alignment() const { return alignment_; }
    /// Index of the tensor that write_tensor_data() fills next.
    size_t current_tensor() const { return current_; }

  private:
    struct Tensor {
        std::string name;
        uint32_t type = 0;
        uint32_t n_dims = 0;
        std::array<uint64_t, 4> ne{1, 1, 1, 1};
        uint64_t nbytes = 0;
        uint64_t offset = 0;  ///< from the data start, aligned
    };

    void put(const void* p, size_t n);
    void put_string(std::string_view s);
    void put_value(const Value& v);
    void put_array_elems(const Value& v);
    void pad(uint64_t written);
    [[noreturn]] void fail(const std::string& what) const;

    std::string path_;
    std::FILE* fp_ = nullptr;
    bool header_written_ = false;
    bool finished_ = false;
    uint32_t alignment_ = 32;
    std::vector<std::pair<std::string, Value>> kv_;
    std::vector<Tensor> tensors_;
    size_t current_ = 0;         ///< tensor being filled
    uint64_t current_done_ = 0;  ///< bytes of it written so far
};

/// Value helpers so callers can write `set_kv("general.file_type", u32(7))`.
Value make_u32(uint32_t v);
Value make_string(std::string s);

}  // namespace wb::gguf
