// The architectures this engine runs, and the helpers their specs share
// (tensor table building, optional keys).

#include <algorithm>
#include <optional>
#include <vector>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

const ArchSpec* const kSpecs[] = {
#define WB_ARCH(spec) &spec,
#include "model/arch/archs.def"
#undef WB_ARCH
};

std::string shape_text(uint64_t ne0, uint64_t ne1) {
    return ne1 == 1 ? "[" + std::to_string(ne0) + "]"
                    : "[" + std::to_string(ne0) + ", " + std::to_string(ne1) + "]";
}

}  // namespace

const ArchSpec* find_arch(std::string_view arch) {
    for (const ArchSpec* s : kSpecs)
        if (arch == s->name) return s;
    return nullptr;
}

std::string supported_arch_list() {
    std::vector<std::string> names;
    for (const ArchSpec* s : kSpecs) names.emplace_back(s->name);
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::string layer_tensor(uint32_t l, const char* suffix) {
    return "blk." + std::to_string(l) + "." + suffix;
}

uint32_t TensorTable::require(const std::string& name, uint64_t ne0, uint64_t ne1) {
    const gguf::TensorInfo& t = f_.tensor(name);  // throws "missing tensor"
    if (t.ne[0] != ne0 || t.ne[1] != ne1 || t.ne[2] != 1 || t.ne[3] != 1) {
        throw gguf::Error(f_.path(), t.info_offset, "tensor '" + name + "'",
                          "shape " + t.shape_string() + ", expected " + shape_text(ne0, ne1));
    }
    const ggml::TypeTraits* tt = ggml::type_traits(t.type);
    if (!tt || !tt->computable) throw ggml::UnsupportedType(t.type, name);
    for (size_t i = 0; i < d_.tensors.size(); ++i)
        if (d_.tensors[i].name == name) return static_cast<uint32_t>(i);
    d_.tensors.push_back(TensorRef{name, t.type, ne0, ne1, t.nbytes, t.data});
    return static_cast<uint32_t>(d_.tensors.size() - 1);
}

int32_t TensorTable::optional(const std::string& name, uint64_t ne0, uint64_t ne1) {
    if (!f_.find_tensor(name)) return kNoWeight;
    return static_cast<int32_t>(require(name, ne0, ne1));
}

MatId TensorTable::mat(std::initializer_list<uint32_t> parts) {
    MatDesc m;
    for (uint32_t p : parts) {
        const TensorRef& t = d_.tensors.at(p);
        if (m.parts.empty()) m.ne0 = t.ne0;
        m.parts.push_back(p);
        m.rows += t.ne1;
        m.label += (m.label.empty() ? "" : "+") + t.name;
    }
    for (size_t i = 0; i < d_.mats.size(); ++i)
        if (d_.mats[i].parts == m.parts) return static_cast<MatId>(i);
    d_.mats.push_back(std::move(m));
    return static_cast<MatId>(d_.mats.size() - 1);
}

VecId TensorTable::vec(std::initializer_list<int32_t> parts) {
    VecDesc v;
    for (int32_t p : parts) {
        if (p == kNoWeight) return kNoWeight;
        const TensorRef& t = d_.tensors.at(static_cast<size_t>(p));
        v.parts.push_back(static_cast<uint32_t>(p));
        v.n += t.ne0 * t.ne1;
    }
    d_.vecs.push_back(std::move(v));
    return static_cast<VecId>(d_.vecs.size() - 1);
}

std::vector<float> TensorTable::values(uint32_t tensor) const {
    const TensorRef& t = d_.tensors.at(tensor);
    std::vector<float> out(t.ne0 * t.ne1);  // [ne1, ne0]
    const size_t row = ggml::row_bytes(t.type, t.ne0);
    for (uint64_t r = 0; r < t.ne1; ++r)
        ggml::dequantize_row(t.type, t.data + r * row, out.data() + r * t.ne0, t.ne0, t.name);
    return out;
}

void describe_io(TensorTable& t, ModelDesc& d) {
    const HParams& hp = t.hp();
    d.token_embd = t.mat({t.require("token_embd.weight", hp.n_embd, hp.n_vocab)});
    d.output_norm = t.vec({static_cast<int32_t>(t.require("output_norm.weight", hp.n_embd))});
    const int32_t out = t.optional("output.weight", hp.n_embd, hp.n_vocab);
    d.output = out == kNoWeight ? d.token_embd : t.mat({static_cast<uint32_t>(out)});
}

void describe_split_layers(TensorTable& t, ModelDesc& d, bool qkv_bias, bool qk_norm,
                           bool post_norms) {
    const HParams& hp = t.hp();
    const uint64_t n_embd = hp.n_embd, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
    auto req = [&](uint32_t l, const char* s, uint64_t ne0, uint64_t ne1 = 1) {
        return t.require(layer_tensor(l, s), ne0, ne1);
    };
    auto vreq = [&](uint32_t l, const char* s, uint64_t n) {
        return t.vec({static_cast<int32_t>(req(l, s, n))});
    };
    d.layers.resize(hp.n_layer);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        LayerDesc& L = d.layers[l];
        L.attn_norm = vreq(l, "attn_norm.weight", n_embd);
        L.qkv =
            t.mat({req(l, "attn_q.weight", n_embd, q_dim), req(l, "attn_k.weight", n_embd, kv_dim),
                   req(l, "attn_v.weight", n_embd, kv_dim)});
        if (qkv_bias) {
            L.qkv_bias = t.vec({static_cast<int32_t>(req(l, "attn_q.bias", q_dim)),
                                static_cast<int32_t>(req(l, "attn_k.bias", kv_dim)),
                                static_cast<int32_t>(req(l, "attn_v.bias", kv_dim))});
        }
        if (qk_norm) {
            L.q_norm = vreq(l, "attn_q_norm.weight", hp.head_dim);
            L.k_norm = vreq(l, "attn_k_norm.weight", hp.head_dim);
        }
        L.wo = t.mat({req(l, "attn_output.weight", q_dim, n_embd)});
        if (post_norms) L.post_attn_norm = vreq(l, "post_attention_norm.weight", n_embd);
        L.ffn_norm = vreq(l, "ffn_norm.weight", n_embd);
        L.gate_up = t.mat(
            {req(l, "ffn_gate.weight", n_embd, hp.n_ff), req(l, "ffn_up.weight", n_embd, hp.n_ff)});
        L.down = t.mat({req(l, "ffn_down.weight", hp.n_ff, n_embd)});
        if (post_norms) L.post_ffn_norm = vreq(l, "post_ffw_norm.weight", n_embd);
    }
}

namespace arch {

uint32_t read_u32_opt(const gguf::File& f, const HParams& hp, const std::string& suffix) {
    const std::string key = hp.arch + "." + suffix;
    std::optional<int64_t> v = f.get_int(key);
    if (!v) return 0;
    if (*v < 0 || *v > int64_t{UINT32_MAX}) {
        throw gguf::Error(f.path(), std::nullopt, "metadata key '" + key + "'",
                          "value " + std::to_string(*v) + " is not a 32-bit count");
    }
    return static_cast<uint32_t>(*v);
}

float read_positive_opt(const gguf::File& f, const HParams& hp, const std::string& suffix) {
    const std::string key = hp.arch + "." + suffix;
    std::optional<double> v = f.get_float(key);
    if (!v) return 0.0f;
    if (!(*v > 0.0 && *v < 1e30)) {
        throw gguf::Error(f.path(), std::nullopt, "metadata key '" + key + "'",
                          "value " + std::to_string(*v) + " must be positive");
    }
    return static_cast<float>(*v);
}

}  // namespace arch

}  // namespace wb::model
