#include "gguf/writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "ggml/types.h"

namespace wb::gguf {

namespace {

constexpr uint32_t kVersion = 3;

bool is_power_of_two(uint64_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

}  // namespace

Value make_u32(uint32_t v) {
    Value out;
    out.type = ValueType::Uint32;
    out.u = v;
    return out;
}

Value make_string(std::string s) {
    Value out;
    out.type = ValueType::String;
    out.str = std::move(s);
    return out;
}

Writer::Writer(std::string path) : path_(std::move(path)) {
    fp_ = std::fopen(path_.c_str(), "wb");
    if (!fp_) {
        throw WriteError(path_ + ": cannot create file: " + std::strerror(errno));
    }
}

Writer::~Writer() {
    if (fp_) {
        std::fclose(fp_);
        fp_ = nullptr;
    }
    if (!finished_) {
        std::remove(path_.c_str());  // never leave a truncated model behind
    }
}

void Writer::fail(const std::string& what) const {
    throw WriteError(path_ + ": " + what);
}

void Writer::set_kv(std::string key, Value value) {
    if (header_written_) fail("metadata key '" + key + "' set after the header was written");
    if (key == "general.alignment") {
        if (value.type != ValueType::Uint32 && value.type != ValueType::Uint64 &&
            value.type != ValueType::Uint16 && value.type != ValueType::Uint8) {
            fail("metadata key 'general.alignment' must be an unsigned integer, got " +
                 value_type_name(static_cast<uint32_t>(value.type)));
        }
        if (!is_power_of_two(value.u) || value.u > (1u << 30)) {
            fail("metadata key 'general.alignment' must be a power of two, got " +
                 std::to_string(value.u));
        }
        alignment_ = static_cast<uint32_t>(value.u);
    }
    for (auto& [k, v] : kv_) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    kv_.emplace_back(std::move(key), std::move(value));
}

uint64_t Writer::add_tensor(std::string name, uint32_t type, uint32_t n_dims,
                            const std::array<uint64_t, 4>& ne) {
    if (header_written_) fail("tensor '" + name + "' added after the header was written");
    if (n_dims < 1 || n_dims > 4) {
        fail("tensor '" + name + "': n_dims " + std::to_string(n_dims) + " not in 1..4");
    }
    for (const Tensor& t : tensors_) {
        if (t.name == name) fail("tensor '" + name + "' added twice");
    }
    uint64_t rows = 1;
    for (uint32_t d = 1; d < 4; ++d) {
        if (d >= n_dims && ne[d] != 1) {
            fail("tensor '" + name + "': ne[" + std::to_string(d) + "] must be 1 for " +
                 std::to_string(n_dims) + " dims");
        }
        rows *= ne[d];
    }
    uint64_t row = 0;
    try {
        row = ggml::row_bytes(type, ne[0]);
    } catch (const std::exception& e) {
        fail("tensor '" + name + "': " + e.what());
    }
    Tensor t;
    t.name = std::move(name);
    t.type = type;
    t.n_dims = n_dims;
    t.ne = ne;
    t.nbytes = row * rows;
    tensors_.push_back(std::move(t));
    return tensors_.back().nbytes;
}

void Writer::put(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, fp_) != n) {
        fail(std::string("write failed: ") + std::strerror(errno));
    }
}

void Writer::put_string(std::string_view s) {
    const uint64_t len = s.size();
    put(&len, sizeof len);
    put(s.data(), s.size());
}

static_assert(std::endian::native == std::endian::little,
              "GGUF writer assumes a little-endian host");

void Writer::put_value(const Value& v) {
    switch (v.type) {
        case ValueType::Uint8: {
            uint8_t x = static_cast<uint8_t>(v.u);
            put(&x, 1);
            break;
        }
        case ValueType::Int8: {
            int8_t x = static_cast<int8_t>(v.i);
            put(&x, 1);
            break;
        }
        case ValueType::Uint16: {
            uint16_t x = static_cast<uint16_t>(v.u);
            put(&x, 2);
            break;
        }
        case ValueType::Int16: {
            int16_t x = static_cast<int16_t>(v.i);
            put(&x, 2);
            break;
        }
        case ValueType::Uint32: {
            uint32_t x = static_cast<uint32_t>(v.u);
            put(&x, 4);
            break;
        }
        case ValueType::Int32: {
            int32_t x = static_cast<int32_t>(v.i);
            put(&x, 4);
            break;
        }
        case ValueType::Uint64:
            put(&v.u, 8);
            break;
        case ValueType::Int64:
            put(&v.i, 8);
            break;
        // Float32 values are read into a double exactly, so the cast back is exact.
        case ValueType::Float32: {
            float x = static_cast<float>(v.f);
            put(&x, 4);
            break;
        }
        case ValueType::Float64:
            put(&v.f, 8);
            break;
        case ValueType::Bool: {
            uint8_t x = v.u ? 1 : 0;
            put(&x, 1);
            break;
        }
        case ValueType::String:
            put_string(v.str);
            break;
        case ValueType::Array: {
            const uint32_t et = static_cast<uint32_t>(v.array_type);
            const uint64_t n = v.array_size();
            put(&et, 4);
            put(&n, 8);
            put_array_elems(v);
            break;
        }
        default:
            fail("metadata value of unknown type " + std::to_string(static_cast<uint32_t>(v.type)));
    }
}

void Writer::put_array_elems(const Value& v) {
    Value e;
    e.type = v.array_type;
    switch (v.array_type) {
        case ValueType::Uint8:
        case ValueType::Uint16:
        case ValueType::Uint32:
        case ValueType::Uint64:
        case ValueType::Bool:
            for (uint64_t x : v.array_u) {
                e.u = x;
                put_value(e);
            }
            break;
        case ValueType::Int8:
        case ValueType::Int16:
        case ValueType::Int32:
        case ValueType::Int64:
            for (int64_t x : v.array_i) {
                e.i = x;
                put_value(e);
            }
            break;
        case ValueType::Float32:
        case ValueType::Float64:
            for (double x : v.array_f) {
                e.f = x;
                put_value(e);
            }
            break;
        case ValueType::String:
            for (const std::string& s : v.array_str) put_string(s);
            break;
        case ValueType::Array:
            for (const Value& nested : v.array_nested) put_value(nested);
            break;
        default:
            fail("array of unknown element type " +
                 std::to_string(static_cast<uint32_t>(v.array_type)));
    }
}

void Writer::pad(uint64_t written) {
    static const uint8_t zeros[256] = {};
    uint64_t rem = (alignment_ - written % alignment_) % alignment_;
    while (rem) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(rem, sizeof zeros));
        put(zeros, n);
        rem -= n;
    }
}

void Writer::write_header() {
    if (header_written_) fail("write_header() called twice");
    // Offsets: each tensor starts aligned, as ggml's gguf_add_tensor places them.
    uint64_t offset = 0;
    for (Tensor& t : tensors_) {
        t.offset = offset;
        offset += t.nbytes;
        offset += (alignment_ - offset % alignment_) % alignment_;
    }
    const uint64_t n_tensors = tensors_.size();
    const uint64_t n_kv = kv_.size();
    put("GGUF", 4);
    put(&kVersion, 4);
    put(&n_tensors, 8);
    put(&n_kv, 8);
    for (const auto& [key, value] : kv_) {
        put_string(key);
        const uint32_t type = static_cast<uint32_t>(value.type);
        put(&type, 4);
        put_value(value);
    }
    for (const Tensor& t : tensors_) {
        put_string(t.name);
        put(&t.n_dims, 4);
        put(t.ne.data(), 8 * t.n_dims);
        put(&t.type, 4);
        put(&t.offset, 8);
    }
    const long pos = std::ftell(fp_);
    if (pos < 0) fail("cannot tell the file position");
    pad(static_cast<uint64_t>(pos));
    header_written_ = true;
    current_ = 0;
    current_done_ = 0;
    // Zero-byte tensors complete at once.
    while (current_ < tensors_.size() && tensors_[current_].nbytes == 0) ++current_;
}

void Writer::write_tensor_data(const void* data, size_t n) {
    if (!header_written_) fail("tensor data written before the header");
    const auto* p = static_cast<const uint8_t*>(data);
    if (n == 0) return;
    if (current_ >= tensors_.size()) {
        fail(std::to_string(n) + " bytes of tensor data past the last tensor");
    }
    const Tensor& t = tensors_[current_];
    if (n > t.nbytes - current_done_) {
        fail("tensor '" + t.name + "': " + std::to_string(n) + " bytes given but only " +
             std::to_string(t.nbytes - current_done_) + " of its " + std::to_string(t.nbytes) +
             " bytes remain");
    }
    put(p, n);
    current_done_ += n;
    if (current_done_ == t.nbytes) {
        pad(t.nbytes);
        ++current_;
        current_done_ = 0;
        while (current_ < tensors_.size() && tensors_[current_].nbytes == 0) ++current_;
    }
}

void Writer::finish() {
    if (!header_written_) write_header();
    if (current_ < tensors_.size()) {
        const Tensor& t = tensors_[current_];
        fail("tensor '" + t.name + "' has " + std::to_string(current_done_) + " of its " +
             std::to_string(t.nbytes) + " bytes; file not finished");
    }
    if (std::fflush(fp_) != 0 || std::fclose(fp_) != 0) {
        fp_ = nullptr;
        fail(std::string("cannot flush/close: ") + std::strerror(errno));
    }
    fp_ = nullptr;
    finished_ = true;
}

}  // namespace wb::gguf
