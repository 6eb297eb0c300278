// phi3 (Phi-3, Phi-3.5 mini): llama's graph with the Q, K and V projections
// fused in one attn_qkv tensor (rows Q, K, V) and gate and up fused in one
// ffn_up tensor of 2 n_ff rows (gate rows first), NeoX RoPE, partial rotary
// when rope.dimension_count < head size (llama.cpp src/models/phi3.cpp).
// Long-context "longrope" factors (rope_factors_long/short.weight) are not
// part of this spec, so such a file is refused by tensor name.

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

// llama.cpp reads phi3.attention.sliding_window but runs every layer
// without a window ("Phi SWA is currently disabled"); so does this engine,
// to give the same results.
void read_phi3(const gguf::File&, HParams&) {}

void describe_phi3(TensorTable& t, ModelDesc& d) {
    const HParams& hp = d.hp;
    describe_io(t, d);
    const uint64_t n_embd = hp.n_embd;
    d.layers.resize(hp.n_layer);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        LayerDesc& L = d.layers[l];
        L.attn_norm =
            t.vec({static_cast<int32_t>(t.require(layer_tensor(l, "attn_norm.weight"), n_embd))});
        L.qkv = t.mat({t.require(layer_tensor(l, "attn_qkv.weight"), n_embd,
                                 uint64_t{hp.q_dim()} + 2 * uint64_t{hp.kv_dim()})});
        L.wo = t.mat({t.require(layer_tensor(l, "attn_output.weight"), hp.q_dim(), n_embd)});
        L.ffn_norm =
            t.vec({static_cast<int32_t>(t.require(layer_tensor(l, "ffn_norm.weight"), n_embd))});
        L.gate_up =
            t.mat({t.require(layer_tensor(l, "ffn_up.weight"), n_embd, 2 * uint64_t{hp.n_ff})});
        L.down = t.mat({t.require(layer_tensor(l, "ffn_down.weight"), hp.n_ff, n_embd)});
    }
}

}  // namespace

const ArchSpec kArchPhi3 = {"phi3", RopeMode::NeoX, 6, read_phi3, describe_phi3, graph_llama};

}  // namespace wb::model
