#include "quant/quantize_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/mix_rules.h"

namespace wb::quant {

namespace {

// ggml's GGML_QNT_VERSION, written as general.quantization_version.
constexpr uint32_t kQuantizationVersion = 2;

// Layer number of "blk.N.*", -1 for tensors outside the layers (as
// llama.cpp's weight_name_comparer reads it with sscanf("blk.%d.")).
int layer_of(const std::string& name) {
    if (name.rfind("blk.", 0) != 0) return -1;
    size_t i = 4;
    int layer = 0;
    bool digits = false;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
        layer = layer * 10 + (name[i] - '0');
        digits = true;
        ++i;
        if (layer > 1000000) return -1;
    }
    return digits ? layer : -1;
}

// The plan of every tensor of `in` in output order, by the mix rules.
std::vector<TensorPlan> plan_tensors(const gguf::File& in, Target target, bool pure,
                                     std::vector<const gguf::TensorInfo*>& order) {
    std::vector<std::string> names;
    for (const gguf::TensorInfo& t : in.tensors()) names.push_back(t.name);
    names = llama_quantize_order(std::move(names));
    std::vector<MixTensor> mix;
    order.clear();
    for (const std::string& n : names) {
        const gguf::TensorInfo& t = in.tensor(n);
        order.push_back(&t);
        mix.push_back({t.name, t.type, t.n_dims, t.ne[0]});
    }
    const std::vector<MixChoice> choice = choose_types(MixModel::from_gguf(in), mix, target, pure);
    std::vector<TensorPlan> plans;
    for (size_t i = 0; i < order.size(); ++i) {
        const gguf::TensorInfo& t = *order[i];
        TensorPlan p;
        p.name = t.name;
        p.src_type = t.type;
        p.dst_type = choice[i].type;
        p.shape = t.shape_string();
        p.src_bytes = t.nbytes;
        p.n_elements = t.n_elements();
        p.note = choice[i].reason;
        if (!choice[i].quantize) p.note += " (" + ggml::type_name(t.type) + ")";
        p.dst_bytes = ggml::row_bytes(p.dst_type, t.ne[0]) * t.n_rows();
        if (p.dst_type != p.src_type) {
            const ggml::TypeTraits* src = ggml::type_traits(t.type);
            if (!src || !src->computable) throw ggml::UnsupportedType(t.type, t.name);
        }
        plans.push_back(std::move(p));
    }
    return plans;
}

// Refuses a source row holding NaN or an infinity (a damaged file: a NaN
// scale or dmin, a NaN weight, a type field that does not match the data):
// quantizing it would write a model whose every forward pass is NaN.
// `row` is row `r` of `t` dequantized to f32. The error names the tensor
// and the first bad block (in the source type's blocks, counted from the
// tensor's start; a plain type's block is one value), with its row, its
// values and its file offset.
void check_finite_row(const gguf::File& in, const gguf::TensorInfo& t, uint64_t r,
                      const std::vector<float>& row) {
    for (uint64_t k = 0; k < row.size(); ++k) {
        if (std::isfinite(row[k])) continue;
        const ggml::TypeTraits* tr = ggml::type_traits(t.type);
        const uint64_t bs = tr && tr->block_size ? tr->block_size : 1;
        const uint64_t block_bytes = tr ? tr->type_size : 4;
        const uint64_t block = r * ((row.size() + bs - 1) / bs) + k / bs;
        const uint64_t first = k / bs * bs;
        const uint64_t last = std::min<uint64_t>(first + bs, row.size()) - 1;
        const std::string what = std::isnan(row[k]) ? "NaN" : row[k] > 0 ? "+inf" : "-inf";
        const std::string where =
            bs == 1 ? "value " + std::to_string(k)
                    : "values " + std::to_string(first) + ".." + std::to_string(last);
        const std::string problem =
            bs == 1 ? "is " + what : "decodes to " + what + ": its values or scales are damaged";
        throw gguf::Error(in.path(), in.data_offset() + t.offset + block * block_bytes,
                          "tensor '" + t.name + "'",
                          ggml::type_upper_name(t.type) + " block " + std::to_string(block) +
                              " (row " + std::to_string(r) + ", " + where + ") " + problem +
                              "; a model with non-finite weights cannot be quantized, nothing "
                              "was written");
    }
}

}  // namespace

double QuantizeReport::bpw() const {
    uint64_t bytes = 0, n = 0;
    for (const TensorPlan& p : tensors) {
        bytes += p.dst_bytes;
        n += p.n_elements;
    }
    return n ? 8.0 * static_cast<double>(bytes) / static_cast<double>(n) : 0.0;
}

std::string QuantizeReport::type_mix() const {
    std::map<std::string, int> counts;
    for (const TensorPlan& p : tensors) ++counts[ggml::type_upper_name(p.dst_type)];
    std::string mix;
    for (const auto& [name, n] : counts)
        mix += (mix.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    return mix;
}

std::vector<TensorPlan> plan_file(const std::string& in_path, Target target,
                                  const QuantizeOptions& options) {
    const gguf::File in = gguf::File::open(in_path);
    std::vector<const gguf::TensorInfo*> order;
    return plan_tensors(in, target, options.pure, order);
}

std::vector<std::string> llama_quantize_order(std::vector<std::string> names) {
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        const int la = layer_of(a), lb = layer_of(b);
        if (la != lb) return la < lb;
        return a < b;
    });
    return names;
}

QuantizeReport quantize_file(const std::string& in_path, const std::string& out_path, Target target,
                             const QuantizeProgress& progress, const QuantizeOptions& options) {
    std::error_code ec;
    if (std::filesystem::equivalent(in_path, out_path, ec)) {
        throw std::invalid_argument("input and output are the same file: " + out_path);
    }
    const gguf::File in = gguf::File::open(in_path);

    gguf::Writer out(out_path);
    for (const auto& [key, value] : in.metadata()) out.set_kv(key, value);
    out.set_kv("general.quantization_version", gguf::make_u32(kQuantizationVersion));
    out.set_kv("general.file_type", gguf::make_u32(file_type_of(target)));

    QuantizeReport report;
    report.target = target;
    report.input_bytes = in.file_size();
    std::vector<const gguf::TensorInfo*> order;
    report.tensors = plan_tensors(in, target, options.pure, order);
    for (size_t i = 0; i < order.size(); ++i) {
        const gguf::TensorInfo& t = *order[i];
        std::array<uint64_t, 4> ne{t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
        out.add_tensor(t.name, report.tensors[i].dst_type, t.n_dims, ne);
    }
    out.write_header();

    std::vector<float> row_f32;    // [ne0] one source row as float32
    std::vector<uint8_t> row_out;  // [row_bytes(dst_type, ne0)] that row converted
    for (size_t i = 0; i < order.size(); ++i) {
        const gguf::TensorInfo& t = *order[i];
        const TensorPlan& p = report.tensors[i];
        if (progress) progress(i, order.size(), p);
        const uint64_t ne0 = t.ne[0];
        const uint64_t src_row = ggml::row_bytes(t.type, ne0);
        row_f32.resize(ne0);
        if (p.dst_type == p.src_type) {
            // Already in the output type (norms, or a tensor quantized before):
            // copied byte for byte as llama-quantize does, never re-rounded;
            // read once to refuse non-finite values (types the engine cannot
            // read are copied unchecked).
            const ggml::TypeTraits* src = ggml::type_traits(t.type);
            if (src && src->computable) {
                for (uint64_t r = 0; r < t.n_rows(); ++r) {
                    ggml::dequantize_row(t.type, t.data + r * src_row, row_f32.data(), ne0, t.name);
                    check_finite_row(in, t, r, row_f32);
                }
            }
            out.write_tensor_data(t.data, t.nbytes);
            continue;
        }
        const uint64_t dst_row = ggml::row_bytes(p.dst_type, ne0);
        row_out.resize(dst_row);
        for (uint64_t r = 0; r < t.n_rows(); ++r) {
            ggml::dequantize_row(t.type, t.data + r * src_row, row_f32.data(), ne0, t.name);
            check_finite_row(in, t, r, row_f32);
            ggml::quantize_row(p.dst_type, row_f32.data(), row_out.data(), ne0, t.name);
            out.write_tensor_data(row_out.data(), row_out.size());
        }
    }
    in.check_intact();  // a source that shrank meanwhile was read as zeros: no output
    out.finish();
    report.output_bytes = std::filesystem::file_size(out_path);
    return report;
}

}  // namespace wb::quant
