#pragma once
// Copies a GGUF file with one string metadata key set (added or replaced),
// written straight from the GGUF spec (ggml/docs/gguf.md) and independent
// of engine/gguf, so tests can put a hostile chat template into a real
// model without trusting the code under test. Tensor infos and data are
// copied as they are; the data section starts at the next multiple of the
// alignment (general.alignment is not changed by this copy, 32 assumed
// unless the file sets it).

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace wbtest {

/// Writes `dst`: `src` with metadata `key` = `value` (a GGUF string).
/// Throws std::runtime_error for a file it cannot read or parse.
inline void gguf_set_string(const std::string& src, const std::string& dst, const std::string& key,
                            const std::string& value) {
    std::ifstream in(src, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + src);
    const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t p = 0;
    auto take = [&](size_t n) {
        if (p + n > b.size()) throw std::runtime_error(src + ": truncated");
        const size_t at = p;
        p += n;
        return at;
    };
    auto u32 = [&] {
        uint32_t v;
        std::memcpy(&v, b.data() + take(4), 4);
        return v;
    };
    auto u64 = [&] {
        uint64_t v;
        std::memcpy(&v, b.data() + take(8), 8);
        return v;
    };
    auto str = [&] {
        const uint64_t n = u64();
        return b.substr(take(n), n);
    };
    // Bytes of one value of `type` (0..12), skipping it.
    auto skip_value = [&](auto&& self, uint32_t type) -> void {
        static const size_t kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == 8) {
            str();
        } else if (type == 9) {
            const uint32_t et = u32();
            const uint64_t n = u64();
            for (uint64_t i = 0; i < n; ++i) self(self, et);
        } else if (type <= 12) {
            take(kSize[type]);
        } else {
            throw std::runtime_error(src + ": unknown value type");
        }
    };
    if (b.compare(0, 4, "GGUF") != 0) throw std::runtime_error(src + ": not GGUF");
    take(4);
    const uint32_t version = u32();
    const uint64_t n_tensors = u64();
    const uint64_t n_kv = u64();
    std::string kvs;
    uint64_t kept = 0;
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
        const size_t start = p;
        const std::string k = str();
        const uint32_t type = u32();
        const size_t value_at = p;
        skip_value(skip_value, type);
        if (k == "general.alignment" && type == 4) {
            uint32_t a;
            std::memcpy(&a, b.data() + value_at, 4);
            alignment = a;
        }
        if (k == key) continue;
        kvs += b.substr(start, p - start);
        ++kept;
    }
    const size_t infos_at = p;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        str();
        const uint32_t n_dims = u32();
        take(8 * static_cast<size_t>(n_dims) + 4 + 8);
    }
    const std::string infos = b.substr(infos_at, p - infos_at);
    const size_t data_at = (p + alignment - 1) / alignment * alignment;

    std::string out = "GGUF";
    auto put = [&out](const void* v, size_t n) { out.append(static_cast<const char*>(v), n); };
    auto put_str = [&](const std::string& s) {
        const uint64_t n = s.size();
        put(&n, 8);
        out += s;
    };
    const uint64_t n_kv_out = kept + 1;
    put(&version, 4);
    put(&n_tensors, 8);
    put(&n_kv_out, 8);
    out += kvs;
    put_str(key);
    const uint32_t string_type = 8;
    put(&string_type, 4);
    put_str(value);
    out += infos;
    while (out.size() % alignment) out.push_back('\0');
    out.append(b, data_at, std::string::npos);
    std::ofstream o(dst, std::ios::binary | std::ios::trunc);
    o.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!o) throw std::runtime_error("cannot write " + dst);
}

}  // namespace wbtest
