#include "quant/file_info.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "quant/file_types.h"

namespace wb::quant {

std::string QuantizationInfo::summary() const {
    if (tensor_types.empty()) return file_type;
    char bpw_text[32];
    std::snprintf(bpw_text, sizeof bpw_text, "%.2f", bpw);
    return file_type + ", " + bpw_text + " bpw";
}

std::string QuantizationInfo::tensor_types_text() const {
    std::string s;
    for (const auto& [type, n] : tensor_types)
        s += (s.empty() ? "" : ", ") + type + " x" + std::to_string(n);
    return s;
}

QuantizationInfo describe_quantization(const gguf::File& f) {
    QuantizationInfo q;
    std::map<std::string, int> counts;
    std::map<std::string, uint64_t> bytes_by_type;
    uint64_t bytes = 0, elements = 0;
    for (const gguf::TensorInfo& t : f.tensors()) {
        const std::string type = ggml::type_upper_name(t.type);
        ++counts[type];
        bytes_by_type[type] += t.nbytes;
        bytes += t.nbytes;
        elements += t.n_elements();
    }
    q.bpw = elements ? 8.0 * static_cast<double>(bytes) / static_cast<double>(elements) : 0.0;
    q.tensor_types.assign(counts.begin(), counts.end());
    std::stable_sort(q.tensor_types.begin(), q.tensor_types.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (const auto ft = f.get_int("general.file_type")) {
        q.file_type = file_type_upper_name(*ft);
        q.file_type_from_key = !q.file_type.empty();
    }
    if (q.file_type.empty()) {
        // No (known) file type: the type that holds most of the bytes (norms
        // stay F32 in every quantized file, so counting tensors would mislead).
        uint64_t best = 0;
        for (const auto& [type, b] : bytes_by_type) {
            if (b > best) {
                best = b;
                q.file_type = type;
            }
        }
    }
    return q;
}

}  // namespace wb::quant
