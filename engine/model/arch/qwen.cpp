// qwen2 (Qwen2, Qwen2.5) and qwen3 (dense Qwen3): llama's graph with
// Q/K/V biases (qwen2) or a per-head RMSNorm of Q and K before RoPE
// (qwen3), NeoX RoPE (llama.cpp src/models/qwen2.cpp, qwen3.cpp).

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

void read_qwen(const gguf::File&, HParams&) {}

void describe_qwen2(TensorTable& t, ModelDesc& d) {
    describe_io(t, d);
    describe_split_layers(t, d, /*qkv_bias=*/true, /*qk_norm=*/false, /*post_norms=*/false);
}

void describe_qwen3(TensorTable& t, ModelDesc& d) {
    describe_io(t, d);
    describe_split_layers(t, d, /*qkv_bias=*/false, /*qk_norm=*/true, /*post_norms=*/false);
}

}  // namespace

const ArchSpec kArchQwen2 = {"qwen2", RopeMode::NeoX, 12, read_qwen, describe_qwen2, graph_llama};
const ArchSpec kArchQwen3 = {"qwen3", RopeMode::NeoX, 11, read_qwen, describe_qwen3, graph_llama};

}  // namespace wb::model
