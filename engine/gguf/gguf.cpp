#include "gguf/gguf.h"

#include <sys/stat.h>

#include <bit>
#include <chrono>
#include <cstring>
#include <limits>

#include "ggml/types.h"

namespace wb::gguf {

namespace {
constexpr uint32_t kMagic = 0x46554747u;  // "GGUF" read as little-endian uint32
constexpr int kMaxNesting = 8;            // arrays of arrays deeper than this are refused

std::string format_message(const std::string& path, std::optional<uint64_t> offset,
                           const std::string& field, const std::string& problem) {
    std::string m = path + ": ";
    if (offset) m += "offset " + std::to_string(*offset) + ": ";
    if (!field.empty()) m += field + ": ";
    return m + problem;
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) {
    return __builtin_mul_overflow(a, b, out);
}
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) {
    return __builtin_add_overflow(a, b, out);
}

// Smallest encoding of one value of type t, for "does the count fit" checks
// before anything is allocated. 0 for an unknown type.
uint64_t min_encoded_size(ValueType t) {
    switch (t) {
        case ValueType::Uint8:
        case ValueType::Int8:
        case ValueType::Bool:
            return 1;
        case ValueType::Uint16:
        case ValueType::Int16:
            return 2;
        case ValueType::Uint32:
        case ValueType::Int32:
        case ValueType::Float32:
            return 4;
        case ValueType::Uint64:
        case ValueType::Int64:
        case ValueType::Float64:
        case ValueType::String:  // u64 length
            return 8;
        case ValueType::Array:  // u32 type + u64 count
            return 12;
    }
    return 0;
}

// Memory the parsed metadata and tensor infos may take. Counts are checked
// against the bytes left in the file, but an item's in-memory form is
// larger than its encoding (a 12-byte empty nested array is a ~200-byte
// Value, a 1-byte bool a uint64_t): a crafted 96 MB file took 1.6 GB before
// it was refused. Real models need far less: a 262k-token vocabulary with
// scores, types and merges is under 64 MiB.
constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 20;
// Hash-index node and bookkeeping per key or tensor, beyond its own struct.
constexpr uint64_t kEntryOverhead = 64;

// A key or tensor name as it appears in field labels. Names come from the
// file and may be megabytes long; every array element's label starts with
// its key, so an unbounded name would make reading an array cost
// O(name length x elements) (a 1 MiB key with 128Ki strings took minutes)
// and put the whole name into an error message. Longer names are cut to
// their first 64 bytes plus their length.
std::string name_label(const std::string& name) {
    constexpr size_t kMaxLabel = 64;
    if (name.size() <= kMaxLabel) return name;
    return name.substr(0, kMaxLabel) + "...(" + std::to_string(name.size()) + " bytes)";
}

}  // namespace

Error::Error(const std::string& path, std::optional<uint64_t> offset, const std::string& field,
             const std::string& problem)
    : wb::FormatError(format_message(path, offset, field, problem)),
      offset_(offset),
      field_(field) {}

std::string TensorInfo::shape_string() const {
    std::string s = "[";
    for (uint32_t d = 0; d < n_dims; ++d) {
        if (d) s += ", ";
        s += std::to_string(ne[d]);
    }
    return s + "]";
}

// Reads the file front to back through a bounds-checked cursor.
class Parser {
  public:
    Parser(File& f) : f_(f), p_(f.map_.data()), size_(f.map_.size()) {}

    void run() {
        const uint32_t magic = read_u32("magic");
        if (magic != kMagic) {
            fail(0, "magic", "not a GGUF file (first bytes are not \"GGUF\")");
        }
        const uint64_t version_at = pos_;
        f_.version_ = read_u32("version");
        if (f_.version_ == 1) {
            fail(version_at, "version", "GGUF version 1 is not supported (only 2 and 3)");
        }
        if (f_.version_ != 2 && f_.version_ != 3) {
            if (__builtin_bswap32(f_.version_) == 2 || __builtin_bswap32(f_.version_) == 3) {
                fail(version_at, "version", "big-endian GGUF files are not supported");
            }
            fail(version_at, "version",
                 "unsupported GGUF version " + std::to_string(f_.version_) + " (only 2 and 3)");
        }
        const uint64_t n_tensors_at = pos_;
        const uint64_t n_tensors = read_u64("tensor_count");
        const uint64_t n_kv_at = pos_;
        const uint64_t n_kv = read_u64("metadata_kv_count");

        // Each KV needs at least a key length (8), a type (4) and 1 value byte.
        check_count(n_kv_at, "metadata_kv_count", n_kv, 8 + 4 + 1);
        charge(charge_n(n_kv, sizeof(std::pair<std::string, Value>) + kEntryOverhead), n_kv_at,
               "metadata_kv_count");
        f_.kv_.reserve(n_kv);
        for (uint64_t k = 0; k < n_kv; ++k) read_kv(k);

        // Each tensor info needs a name length (8), n_dims (4), type (4), offset (8).
        check_count(n_tensors_at, "tensor_count", n_tensors, 8 + 4 + 4 + 8);
        charge(charge_n(n_tensors, sizeof(TensorInfo) + kEntryOverhead), n_tensors_at,
               "tensor_count");
        f_.tensors_.reserve(n_tensors);
        for (uint64_t t = 0; t < n_tensors; ++t) read_tensor_info(t);

        read_alignment();
        uint64_t data = pos_;
        const uint64_t rem = data % f_.alignment_;
        if (rem && add_overflows(data, f_.alignment_ - rem, &data)) {
            fail(pos_, "data section", "offset overflows 64 bits");
        }
        f_.data_offset_ = data;
        place_tensor_data();
    }

  private:
    [[noreturn]] void fail(uint64_t at, const std::string& field, const std::string& problem) {
        throw Error(f_.path_, at, field, problem);
    }

    void need(uint64_t n, const std::string& field) {
        if (n > size_ - pos_) {
            fail(pos_, field,
                 "file ends early: needs " + std::to_string(n) + " bytes, " +
                     std::to_string(size_ - pos_) + " left (file is " + std::to_string(size_) +
                     " bytes)");
        }
    }

    template <typename T>
    T read_scalar(const std::string& field) {
        need(sizeof(T), field);
        T v;
        std::memcpy(&v, p_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    uint32_t read_u32(const std::string& field) { return read_scalar<uint32_t>(field); }
    uint64_t read_u64(const std::string& field) { return read_scalar<uint64_t>(field); }

    // Adds `bytes` to the memory the parsed metadata takes; fails before
    // anything is allocated once it would pass kMaxMetadataBytes.
    void charge(uint64_t bytes, uint64_t at, const std::string& field) {
        uint64_t total;
        if (add_overflows(mem_, bytes, &total) || total > kMaxMetadataBytes) {
            fail(at, field,
                 "the metadata would take more than " + std::to_string(kMaxMetadataBytes >> 20) +
                     " MiB of memory (real models need well under 64 MiB): a crafted or broken "
                     "file");
        }
        mem_ = total;
    }
    uint64_t charge_n(uint64_t n, uint64_t each) {
        uint64_t b;
        return mul_overflows(n, each, &b) ? UINT64_MAX : b;
    }

    // A count of items, each at least `min_item` bytes, must fit in what is left.
    void check_count(uint64_t at, const std::string& field, uint64_t count, uint64_t min_item) {
        uint64_t need_bytes;
        if (mul_overflows(count, min_item, &need_bytes) || need_bytes > size_ - pos_) {
            fail(at, field,
                 "count " + std::to_string(count) + " cannot fit in the " +
                     std::to_string(size_ - pos_) + " bytes left in the file");
        }
    }

    std::string read_string(const std::string& field) {
        const uint64_t at = pos_;
        const uint64_t len = read_u64(field + " (string length)");
        if (len > size_ - pos_) {
            fail(at, field,
                 "string length " + std::to_string(len) + " runs past the end of the file (" +
                     std::to_string(size_ - pos_) + " bytes left)");
        }
        if (len > 15) charge(len, at, field);  // longer than the small-string buffer
        std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
        pos_ += len;
        return s;
    }

    ValueType read_type(const std::string& field) {
        const uint64_t at = pos_;
        const uint32_t t = read_u32(field + " (value type)");
        if (t > static_cast<uint32_t>(ValueType::Float64)) {
            fail(at, field, "unknown metadata value type " + std::to_string(t));
        }
        return static_cast<ValueType>(t);
    }

    void read_scalar_into(Value& v, ValueType t, const std::string& field) {
        v.type = t;
        switch (t) {
            case ValueType::Uint8:
                v.u = read_scalar<uint8_t>(field);
                break;
            case ValueType::Int8:
                v.i = read_scalar<int8_t>(field);
                break;
            case ValueType::Uint16:
                v.u = read_scalar<uint16_t>(field);
                break;
            case ValueType::Int16:
                v.i = read_scalar<int16_t>(field);
                break;
            case ValueType::Uint32:
                v.u = read_scalar<uint32_t>(field);
                break;
            case ValueType::Int32:
                v.i = read_scalar<int32_t>(field);
                break;
            case ValueType::Uint64:
                v.u = read_scalar<uint64_t>(field);
                break;
            case ValueType::Int64:
                v.i = read_scalar<int64_t>(field);
                break;
            case ValueType::Float32:
                v.f = read_scalar<float>(field);
                break;
            case ValueType::Float64:
                v.f = read_scalar<double>(field);
                break;
            case ValueType::Bool: {
                const uint64_t at = pos_;
                const uint8_t b = read_scalar<uint8_t>(field);
                if (b > 1) fail(at, field, "bool value " + std::to_string(b) + " is not 0 or 1");
                v.u = b;
                break;
            }
            case ValueType::String:
                v.str = read_string(field);
                break;
            case ValueType::Array:
                break;  // handled by read_value
        }
    }

    void read_value(Value& v, ValueType t, const std::string& field, int depth) {
        if (t != ValueType::Array) {
            read_scalar_into(v, t, field);
            return;
        }
        v.type = ValueType::Array;
        if (depth >= kMaxNesting) fail(pos_, field, "arrays nested too deeply");
        v.array_type = read_type(field + " (array element type)");
        const uint64_t count_at = pos_;
        const uint64_t n = read_u64(field + " (array length)");
        check_count(count_at, field + " (array length)", n, min_encoded_size(v.array_type));
        const uint64_t each = v.array_type == ValueType::String  ? sizeof(std::string)
                              : v.array_type == ValueType::Array ? sizeof(Value)
                                                                 : 8;  // u64 / i64 / double
        charge(charge_n(n, each), count_at, field + " (array length)");
        Value e;
        switch (v.array_type) {
            case ValueType::Uint8:
            case ValueType::Uint16:
            case ValueType::Uint32:
            case ValueType::Uint64:
            case ValueType::Bool:
                v.array_u.reserve(n);
                for (uint64_t k = 0; k < n; ++k) {
                    read_scalar_into(e, v.array_type, field);
                    v.array_u.push_back(e.u);
                }
                break;
            case ValueType::Int8:
            case ValueType::Int16:
            case ValueType::Int32:
            case ValueType::Int64:
                v.array_i.reserve(n);
                for (uint64_t k = 0; k < n; ++k) {
                    read_scalar_into(e, v.array_type, field);
                    v.array_i.push_back(e.i);
                }
                break;
            case ValueType::Float32:
            case ValueType::Float64:
                v.array_f.reserve(n);
                for (uint64_t k = 0; k < n; ++k) {
                    read_scalar_into(e, v.array_type, field);
                    v.array_f.push_back(e.f);
                }
                break;
            case ValueType::String:
                v.array_str.reserve(n);
                for (uint64_t k = 0; k < n; ++k) {
                    v.array_str.push_back(read_string(field + "[" + std::to_string(k) + "]"));
                }
                break;
            case ValueType::Array:
                v.array_nested.reserve(n);
                for (uint64_t k = 0; k < n; ++k) {
                    v.array_nested.emplace_back();
                    read_value(v.array_nested.back(), ValueType::Array,
                               field + "[" + std::to_string(k) + "]", depth + 1);
                }
                break;
        }
    }

    void read_kv(uint64_t index) {
        const uint64_t at = pos_;
        std::string key = read_string("metadata key #" + std::to_string(index));
        const std::string field = "metadata key '" + name_label(key) + "'";
        if (f_.kv_index_.count(key)) fail(at, field, "duplicate metadata key");
        const ValueType t = read_type(field);
        Value v;
        read_value(v, t, field, 0);
        f_.kv_index_.emplace(key, f_.kv_.size());
        f_.kv_.emplace_back(std::move(key), std::move(v));
    }

    void read_tensor_info(uint64_t index) {
        TensorInfo ti;
        ti.info_offset = pos_;
        ti.name = read_string("tensor #" + std::to_string(index) + " name");
        const std::string field = "tensor '" + name_label(ti.name) + "'";
        const uint64_t dims_at = pos_;
        ti.n_dims = read_u32(field + " n_dims");
        if (ti.n_dims == 0 || ti.n_dims > kMaxDims) {
            fail(dims_at, field,
                 "n_dims " + std::to_string(ti.n_dims) + " is outside 1.." +
                     std::to_string(kMaxDims));
        }
        uint64_t n_elements = 1;
        for (uint32_t d = 0; d < ti.n_dims; ++d) {
            const uint64_t at = pos_;
            ti.ne[d] = read_u64(field + " ne[" + std::to_string(d) + "]");
            if (ti.ne[d] == 0) fail(at, field, "dimension " + std::to_string(d) + " is 0");
            if (ti.ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
                mul_overflows(n_elements, ti.ne[d], &n_elements) ||
                n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                fail(at, field, "element count " + ti.shape_string() + " overflows 64 bits");
            }
        }
        const uint64_t type_at = pos_;
        ti.type = read_u32(field + " type");
        const ggml::TypeTraits* tt = ggml::type_traits(ti.type);
        if (!tt) fail(type_at, field, "unknown ggml type id " + std::to_string(ti.type));
        if (ti.ne[0] % tt->block_size != 0) {
            fail(type_at, field,
                 "row length " + std::to_string(ti.ne[0]) + " is not a multiple of " + tt->name +
                     "'s block size " + std::to_string(tt->block_size));
        }
        uint64_t nbytes = ti.ne[0] / tt->block_size;
        for (uint32_t d = 1; d < kMaxDims; ++d) {
            if (mul_overflows(nbytes, ti.ne[d], &nbytes)) {
                fail(type_at, field, "byte size of " + ti.shape_string() + " overflows 64 bits");
            }
        }
        if (mul_overflows(nbytes, tt->type_size, &nbytes)) {
            fail(type_at, field, "byte size of " + ti.shape_string() + " overflows 64 bits");
        }
        ti.nbytes = nbytes;
        ti.offset = read_u64(field + " offset");
        if (f_.tensor_index_.count(ti.name)) {
            fail(ti.info_offset, field, "two tensors have this name");
        }
        f_.tensor_index_.emplace(ti.name, f_.tensors_.size());
        f_.tensors_.push_back(std::move(ti));
    }

    void read_alignment() {
        const Value* a = f_.find("general.alignment");
        if (!a) return;
        if (a->type != ValueType::Uint32) {
            throw Error(f_.path_, std::nullopt, "metadata key 'general.alignment'",
                        "must be uint32, is " + value_type_name(static_cast<uint32_t>(a->type)));
        }
        if (a->u == 0 || (a->u & (a->u - 1)) != 0) {
            throw Error(f_.path_, std::nullopt, "metadata key 'general.alignment'",
                        std::to_string(a->u) + " is not a power of two");
        }
        if (a->u > kMaxAlignment) {
            throw Error(f_.path_, std::nullopt, "metadata key 'general.alignment'",
                        std::to_string(a->u) + " is larger than " + std::to_string(kMaxAlignment) +
                            " bytes, the most this reader accepts (GGUF files use 32)");
        }
        f_.alignment_ = static_cast<uint32_t>(a->u);
    }

    void place_tensor_data() {
        // Vocab-only files end right after the metadata, before the aligned
        // data start; that is fine when there is no tensor data to place.
        if (f_.tensors_.empty()) return;
        if (f_.data_offset_ > size_) {
            fail(f_.data_offset_, "data section",
                 "starts past the end of the file (" + std::to_string(size_) + " bytes)");
        }
        const uint64_t data_size = size_ - f_.data_offset_;
        for (TensorInfo& t : f_.tensors_) {
            const std::string field = "tensor '" + name_label(t.name) + "'";
            if (t.offset % f_.alignment_ != 0) {
                fail(t.info_offset, field,
                     "data offset " + std::to_string(t.offset) + " is not a multiple of the " +
                         std::to_string(f_.alignment_) + "-byte alignment");
            }
            uint64_t end;
            if (add_overflows(t.offset, t.nbytes, &end) || end > data_size) {
                fail(t.info_offset, field,
                     "data [" + std::to_string(t.offset) + ", +" + std::to_string(t.nbytes) +
                         ") runs past the end of the data section (" + std::to_string(data_size) +
                         " bytes at file offset " + std::to_string(f_.data_offset_) + ")");
            }
            t.data = p_ + f_.data_offset_ + t.offset;
        }
    }

    File& f_;
    const uint8_t* p_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t mem_ = 0;  // bytes the parsed items take (charge())
};

File File::open(const std::string& path, double* map_ms) {
    File f;
    f.path_ = path;
    const auto t0 = std::chrono::steady_clock::now();
    f.map_ = MappedFile(path);
    if (map_ms) {
        *map_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
    }
    Parser(f).run();
    f.check_intact();  // the header was read through the mapping
    return f;
}

void File::check_intact() const {
    const std::optional<uint64_t> at = map_.truncated_at();
    if (!at) return;
    struct stat st {};
    const std::string now = ::stat(path_.c_str(), &st) == 0
                                ? std::to_string(static_cast<uint64_t>(st.st_size)) + " bytes"
                                : std::string("gone");
    throw Error(path_, *at, "file",
                "the file shrank while it was being read (it was " + std::to_string(map_.size()) +
                    " bytes, now " + now +
                    "): another program truncated or rewrote it; load it again once it is "
                    "complete");
}

const Value* File::find(std::string_view key) const {
    auto it = kv_index_.find(std::string(key));
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

namespace {
[[noreturn]] void wrong_type(const std::string& path, std::string_view key, const Value& v,
                             const std::string& wanted) {
    throw Error(path, std::nullopt, "metadata key '" + std::string(key) + "'",
                "expected " + wanted + ", found " + value_type_name(static_cast<uint32_t>(v.type)));
}
}  // namespace

std::optional<int64_t> File::get_int(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_int();
    if (!r) wrong_type(path_, key, *v, "an integer");
    return r;
}

std::optional<double> File::get_float(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    auto r = v->as_double();
    if (!r) wrong_type(path_, key, *v, "a number");
    return r;
}

std::optional<bool> File::get_bool(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type == ValueType::Bool) return v->u != 0;
    wrong_type(path_, key, *v, "bool");
}

std::optional<std::string> File::get_string(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != ValueType::String) wrong_type(path_, key, *v, "string");
    return v->str;
}

const Value* File::get_array(std::string_view key, ValueType elem) const {
    const Value* v = find(key);
    if (!v) return nullptr;
    if (v->type != ValueType::Array) wrong_type(path_, key, *v, "array");
    if (v->array_type != elem) {
        throw Error(path_, std::nullopt, "metadata key '" + std::string(key) + "'",
                    "expected array of " + value_type_name(static_cast<uint32_t>(elem)) +
                        ", found array of " +
                        value_type_name(static_cast<uint32_t>(v->array_type)));
    }
    return v;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(std::string(name));
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::tensor(std::string_view name) const {
    const TensorInfo* t = find_tensor(name);
    if (!t)
        throw Error(path_, std::nullopt, "tensor '" + std::string(name) + "'", "missing tensor");
    return *t;
}

}  // namespace wb::gguf
