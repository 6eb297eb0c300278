#include "model/llama_tensors.h"

#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::model {

std::vector<TensorSpec> llama_tensor_specs(const HParams& hp) {
    const uint64_t n_embd = hp.n_embd, n_kv_dim = uint64_t{hp.n_head_kv} * hp.head_dim;
    std::vector<TensorSpec> specs = {
        {"token_embd.weight", n_embd, hp.n_vocab},
        {"output_norm.weight", n_embd, 1},
    };
    if (!hp.tied_embeddings) specs.push_back({"output.weight", n_embd, hp.n_vocab});
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        specs.push_back({p + "attn_norm.weight", n_embd, 1});
        specs.push_back({p + "attn_q.weight", n_embd, n_embd});
        specs.push_back({p + "attn_k.weight", n_embd, n_kv_dim});
        specs.push_back({p + "attn_v.weight", n_embd, n_kv_dim});
        specs.push_back({p + "attn_output.weight", n_embd, n_embd});
        specs.push_back({p + "ffn_norm.weight", n_embd, 1});
        specs.push_back({p + "ffn_gate.weight", n_embd, hp.n_ff});
        specs.push_back({p + "ffn_up.weight", n_embd, hp.n_ff});
        specs.push_back({p + "ffn_down.weight", hp.n_ff, n_embd});
    }
    return specs;
}

void check_llama_tensors(const gguf::File& f, const HParams& hp) {
    // block_count comes from the file: a hostile 4294967295 would make the
    // spec list 38 billion entries long. Each block needs 9 tensors, so
    // compare with what the file holds before building the list.
    const uint64_t needed = 2 + (hp.tied_embeddings ? 0 : 1) + 9 * uint64_t{hp.n_layer};
    if (needed > f.tensors().size()) {
        // A file without weights at all (a vocabulary-only GGUF) is better
        // told by the tensor it lacks first than by a count.
        (void)f.tensor("token_embd.weight");  // throws "missing tensor" naming it
        throw gguf::Error(f.path(), std::nullopt, "metadata key '" + hp.arch + ".block_count'",
                          std::to_string(hp.n_layer) + " blocks need " + std::to_string(needed) +
                              " tensors, the file has " + std::to_string(f.tensors().size()));
    }
    for (const TensorSpec& s : llama_tensor_specs(hp)) {
        const gguf::TensorInfo& t = f.tensor(s.name);  // throws "missing tensor"
        if (t.ne[0] != s.ne0 || t.ne[1] != s.ne1 || t.ne[2] != 1 || t.ne[3] != 1) {
            const std::string want =
                s.ne1 == 1 ? "[" + std::to_string(s.ne0) + "]"
                           : "[" + std::to_string(s.ne0) + ", " + std::to_string(s.ne1) + "]";
            throw gguf::Error(f.path(), t.info_offset, "tensor '" + s.name + "'",
                              "shape " + t.shape_string() + ", expected " + want);
        }
        const ggml::TypeTraits* tt = ggml::type_traits(t.type);
        if (!tt || !tt->computable) throw ggml::UnsupportedType(t.type, s.name);
    }
}

}  // namespace wb::model
