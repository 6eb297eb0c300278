// fuzz_gguf: arbitrary bytes as a .gguf file -> gguf::File::open, then every
// metadata value and tensor info is walked, then the load-time checks that
// run before any backend allocates (HParams::from_gguf, ModelDesc::from_gguf).
// No forward pass runs.
//
// Findings: crashes, sanitizer reports, hangs (-timeout), huge allocations
// (-malloc_limit_mb), a tensor whose data lies outside the file, an error
// message without the file path.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "fuzz/fuzz_util.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "model/model_desc.h"

namespace {

// Touches every part of a value so sanitizers see each byte the parser kept.
size_t walk(const wb::gguf::Value& v) {
    size_t h = v.to_display().size() + v.array_size();
    (void)v.as_int();
    (void)v.as_double();
    for (const std::string& s : v.array_str) h += s.size();
    for (const wb::gguf::Value& e : v.array_nested) h += walk(e);
    return h;
}

void check(const std::string& path) {
    const wb::gguf::File f = wb::gguf::File::open(path);
    size_t h = 0;
    for (const auto& [key, value] : f.metadata()) {
        if (f.find(key) != &value) {
            std::fprintf(stderr, "find('%s') does not return its own value\n", key.c_str());
            std::abort();
        }
        h += key.size() + walk(value);
    }
    for (const wb::gguf::TensorInfo& t : f.tensors()) {
        h += t.shape_string().size() + t.n_elements() + wb::ggml::type_name(t.type).size();
        // The data range must lie inside the file.
        const uint64_t begin = f.data_offset() + t.offset;
        if (t.data == nullptr || begin < f.data_offset() || begin + t.nbytes > f.file_size()) {
            std::fprintf(stderr, "tensor '%s' data [%llu, +%llu) outside the %llu-byte file\n",
                         t.name.c_str(), static_cast<unsigned long long>(begin),
                         static_cast<unsigned long long>(t.nbytes),
                         static_cast<unsigned long long>(f.file_size()));
            std::abort();
        }
        if (t.nbytes) h += t.data[0] + t.data[t.nbytes - 1];
    }
    (void)wb::model::ModelDesc::from_gguf(f);  // hyperparameters and the weight table
    if (h == 0xdeadbeef) std::puts("");  // keep the walk from being optimised away
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return wbfuzz::check_file(data, size, ".gguf", check);
}
