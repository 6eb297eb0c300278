#pragma once
// Test-side GGUF byte writer, written straight from the GGUF spec and
// independent of engine/gguf, so tests can make valid and deliberately
// broken files without trusting the code under test.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace wbtest {

class GgufBytes {
public:
    std::string buf;

    template <typename T>
    GgufBytes& pod(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        buf.append(b, sizeof(T));
        return *this;
    }
    GgufBytes& u8(uint8_t v) { return pod(v); }
    GgufBytes& u32(uint32_t v) { return pod(v); }
    GgufBytes& u64(uint64_t v) { return pod(v); }
    GgufBytes& f32(float v) { return pod(v); }
    GgufBytes& str(const std::string& s) {
        u64(s.size());
        buf += s;
        return *this;
    }
    GgufBytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
        buf += "GGUF";
        return u32(version).u64(n_tensors).u64(n_kv);
    }
    GgufBytes& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
    GgufBytes& kv_str(const std::string& key, const std::string& v) {
        return str(key).u32(8).str(v);
    }
    /// Tensor info: name, dims (ggml order), type id, offset in data section.
    GgufBytes& tensor(const std::string& name, std::initializer_list<uint64_t> ne, uint32_t type,
                      uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(ne.size()));
        for (uint64_t d : ne) u64(d);
        return u32(type).u64(offset);
    }
    GgufBytes& pad_to(size_t alignment) {
        while (buf.size() % alignment) buf.push_back('\0');
        return *this;
    }
    void write(const std::string& path) const {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    }
};

}  // namespace wbtest
