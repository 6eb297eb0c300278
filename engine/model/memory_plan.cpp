#include "model/memory_plan.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>

#include "ggml/types.h"
#include "model/arch/arch.h"
#include "model/graph.h"
#include "quant/file_types.h"
#include "quant/mix_rules.h"
#include "quant/quantize_model.h"

namespace wb::model {

namespace {

/// Notes the activation buffers a graph asks for; runs nothing.
class PlanOps final : public Ops {
  public:
    PlanOps(uint32_t n_tok, uint32_t n_out) : n_tok_(n_tok), n_out_(n_out) {}
    uint64_t bytes = 0;

    Act act(const char* name, uint32_t width, Rows rows) override {
        for (size_t i = 0; i < names_.size(); ++i)
            if (names_[i] == name) return Act{static_cast<uint32_t>(i), 0, width, width, rows};
        names_.emplace_back(name);
        bytes +=
            buffer_bytes(uint64_t{rows == Rows::Tokens ? n_tok_ : n_out_} * width * sizeof(float));
        return Act{static_cast<uint32_t>(names_.size() - 1), 0, width, width, rows};
    }
    void embed(Act, MatId, float) override {}
    void rms_norm(Act, Act, VecId, float) override {}
    void add_rms_norm(Act, Act, VecId, Act, float) override {}
    void head_rms_norm(Act, uint32_t, uint32_t, VecId, float) override {}
    void matmul(Act, Act, MatId) override {}
    void add_bias(Act, VecId) override {}
    void rope(Act, uint32_t, Act, uint32_t, uint32_t, const RopeConfig&) override {}
    void kv_write(uint32_t, Act, Act) override {}
    void attention(Act, Act, const AttnParams&) override {}
    void glu(Act, Act, Act, FfnActivation) override {}
    void add(Act, Act) override {}
    void gather_outputs(Act, Act) override {}
    void softcap(Act, float) override {}
    void logits(Act) override {}

  private:
    uint32_t n_tok_, n_out_;
    std::vector<std::string> names_;
};

}  // namespace

uint64_t buffer_bytes(uint64_t b) {
    return std::max<uint64_t>(4, (b + 3) & ~uint64_t{3});
}

MemoryNeed plan_memory_host(const ModelDesc& d, const ContextParams& ctx) {
    if (const std::string p = kv_type_problem(ctx.kv_type, d.hp.head_dim); !p.empty())
        throw std::invalid_argument(p);
    MemoryNeed need;
    for (const MatDesc& m : d.mats)
        for (uint32_t p : m.parts)
            need.weights += d.tensors[p].ne1 * ggml::row_bytes(d.tensors[p].type, m.ne0);
    for (const VecDesc& v : d.vecs) need.weights += v.n * sizeof(float);
    const uint64_t cells = KvCells::pool_cells(ctx.n_ctx, ctx.kv_block_size);
    need.kv_cache = 2 * uint64_t{d.hp.n_layer} * cells * kv_row_bytes(ctx.kv_type, d.hp.kv_dim());
    return need;
}

uint64_t graph_activation_bytes(const ModelDesc& d, uint32_t n_tok, uint32_t n_out) {
    PlanOps ops(n_tok, n_out);
    d.arch->graph(d, ops);
    return ops.bytes;
}

const std::vector<NamedShape>& named_shapes() {
    // Published configurations (config.json of each model).
    static const std::vector<NamedShape> shapes = {
        {"1B", "Llama 3.2 1B", 128256, 2048, 16, 32, 8, 8192, true},
        {"3B", "Llama 3.2 3B", 128256, 3072, 28, 24, 8, 8192, true},
        {"7B", "Llama 2 7B", 32000, 4096, 32, 32, 32, 11008, false},
        {"8B", "Llama 3.1 8B", 128256, 4096, 32, 32, 8, 14336, false},
        {"13B", "Llama 2 13B", 32000, 5120, 40, 40, 40, 13824, false},
        {"70B", "Llama 3.1 70B", 128256, 8192, 80, 64, 8, 28672, false},
    };
    return shapes;
}

const NamedShape* find_named_shape(const std::string& name) {
    std::string up = name;
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const NamedShape& s : named_shapes())
        if (s.name == up) return &s;
    return nullptr;
}

namespace {

uint32_t type_by_name(const std::string& name) {
    std::string low = name;
    for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (uint32_t id = 0; id < 64; ++id) {
        const ggml::TypeTraits* t = ggml::type_traits(id);
        if (!t) continue;
        std::string tn = t->name;  // ggml spells K-quants "q4_K"
        for (char& c : tn) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (low == tn) return id;
    }
    std::string targets;
    for (const quant::TargetInfo& t : quant::all_targets()) targets += std::string(" ") + t.name;
    throw std::invalid_argument("unknown weight type '" + name +
                                "' (a file type as `quantize --type` takes it:" + targets +
                                "; or a ggml type for every matrix, such as q4_k or bf16)");
}

/// Gives every tensor of `d` that is a weight matrix (2-D, name ending in
/// "weight") its type: llama-quantize's choice for `target` (the mix, or
/// every matrix alike when `pure`), else `pure_type` for all of them; norms
/// stay F32. Recomputes each tensor's bytes.
void set_weight_types(ModelDesc& d, const std::optional<quant::Target>& target, uint32_t pure_type,
                      bool pure) {
    std::vector<uint32_t> types(d.tensors.size());
    if (target) {
        std::vector<std::string> names;
        for (const TensorRef& t : d.tensors) names.push_back(t.name);
        const std::vector<std::string> order = quant::llama_quantize_order(names);
        std::vector<quant::MixTensor> mix;
        std::vector<size_t> index;  // mix[i] is d.tensors[index[i]]
        for (const std::string& n : order) {
            for (size_t i = 0; i < d.tensors.size(); ++i) {
                if (d.tensors[i].name != n) continue;
                const TensorRef& t = d.tensors[i];
                mix.push_back({t.name, t.type, t.ne1 > 1 ? 2u : 1u, t.ne0});
                index.push_back(i);
                break;
            }
        }
        quant::MixModel mm;
        mm.arch = d.hp.arch;
        mm.n_layer = d.hp.n_layer;
        mm.n_head = d.hp.n_head;
        mm.n_head_kv = d.hp.n_head_kv;
        const std::vector<quant::MixChoice> choice = quant::choose_types(mm, mix, *target, pure);
        for (size_t i = 0; i < mix.size(); ++i) types[index[i]] = choice[i].type;
    } else {
        for (size_t i = 0; i < d.tensors.size(); ++i)
            types[i] = d.tensors[i].ne1 > 1 ? pure_type : d.tensors[i].type;
    }
    for (size_t i = 0; i < d.tensors.size(); ++i) {
        TensorRef& t = d.tensors[i];
        t.type = types[i];
        t.nbytes = ggml::row_bytes(t.type, t.ne0) * t.ne1;  // throws on a bad row length
    }
}

}  // namespace

ModelDesc shape_desc(const NamedShape& s, const std::string& weight_type, bool pure) {
    std::string low = weight_type;
    for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // A file type (what `quantize --type` takes) gets llama-quantize's mix
    // (quant/mix_rules.h); a ggml type that is not a file type (q4_k, bf16,
    // f32) every weight matrix alike. Matrices start as F32 here, as in
    // an F32 original, and take their types at the end.
    std::optional<quant::Target> target;
    uint32_t base_type = 0;
    try {
        target = quant::parse_target(low);
    } catch (const std::invalid_argument&) {
        base_type = type_by_name(low);
    }
    ModelDesc d;
    HParams& hp = d.hp;
    hp.arch = "llama";
    hp.name = s.like + " shape";
    hp.n_vocab = s.n_vocab;
    hp.n_ctx_train = 131072;
    hp.n_embd = s.n_embd;
    hp.n_layer = s.n_layer;
    hp.n_head = s.n_head;
    hp.n_head_kv = s.n_head_kv;
    hp.n_ff = s.n_ff;
    hp.head_dim = s.n_embd / s.n_head;
    hp.n_rot = hp.head_dim;
    hp.tied_embeddings = s.tied;
    hp.swa_layers.assign(hp.n_layer, 0);
    hp.attn_scale = 1.0f;
    d.arch = find_arch("llama");  // the named shapes are Llama 2/3
    auto add = [&](const std::string& name, uint32_t type, uint64_t ne0, uint64_t ne1) {
        const uint64_t bytes = ggml::row_bytes(type, ne0) * ne1;  // throws on a bad row length
        d.tensors.push_back(TensorRef{name, type, ne0, ne1, bytes, nullptr});
        return static_cast<uint32_t>(d.tensors.size() - 1);
    };
    auto mat = [&](std::vector<uint32_t> parts) {
        MatDesc m;
        m.ne0 = d.tensors[parts[0]].ne0;
        for (uint32_t p : parts) m.rows += d.tensors[p].ne1;
        m.parts = std::move(parts);
        d.mats.push_back(std::move(m));
        return static_cast<MatId>(d.mats.size() - 1);
    };
    auto vec = [&](uint32_t p) {
        d.vecs.push_back(VecDesc{{p}, d.tensors[p].ne0});
        return static_cast<VecId>(d.vecs.size() - 1);
    };
    const uint32_t f32 = type_by_name("f32");
    const uint32_t base = f32;  // every matrix's type is chosen below
    const uint64_t n_embd = s.n_embd, kv_dim = uint64_t{hp.head_dim} * s.n_head_kv;
    d.token_embd = mat({add("token_embd.weight", base, n_embd, s.n_vocab)});
    d.output_norm = vec(add("output_norm.weight", f32, n_embd, 1));
    d.output = s.tied ? d.token_embd : mat({add("output.weight", base, n_embd, s.n_vocab)});
    d.layers.resize(s.n_layer);
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        const uint32_t vd = base;
        const std::string p = "blk." + std::to_string(l) + ".";
        LayerDesc& L = d.layers[l];
        L.attn_norm = vec(add(p + "attn_norm.weight", f32, n_embd, 1));
        L.qkv = mat({add(p + "attn_q.weight", base, n_embd, n_embd),
                     add(p + "attn_k.weight", base, n_embd, kv_dim),
                     add(p + "attn_v.weight", vd, n_embd, kv_dim)});
        L.wo = mat({add(p + "attn_output.weight", base, n_embd, n_embd)});
        L.ffn_norm = vec(add(p + "ffn_norm.weight", f32, n_embd, 1));
        L.gate_up = mat({add(p + "ffn_gate.weight", base, n_embd, s.n_ff),
                         add(p + "ffn_up.weight", base, n_embd, s.n_ff)});
        L.down = mat({add(p + "ffn_down.weight", vd, s.n_ff, n_embd)});
    }
    set_weight_types(d, target, base_type, pure);
    return d;
}

}  // namespace wb::model
