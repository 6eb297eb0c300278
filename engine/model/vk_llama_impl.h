#pragma once
// Private to the Vulkan forward pass (vk_llama.cpp, vk_llama_decode.cpp):
// the device objects behind VkLlama.

#include <memory>
#include <vector>

#include "model/vk_llama.h"
#include "vk/buffer.h"
#include "vk/context.h"
#include "vk/kernels.h"
#include "vk/recorder.h"
#include "vk/weights.h"

namespace wb::model {

/// One transformer block on the device.
struct VkLayer {
    vk::Buffer attn_norm, ffn_norm;   // [n_embd] f32
    vk::DeviceWeight wq, wk, wv, wo;  // [n_embd|n_kv_dim rows, n_embd]
    vk::DeviceWeight gate, up, down;  // [n_ff, n_embd], [n_ff, n_embd], [n_embd, n_ff]
    vk::Buffer k_cache, v_cache;      // [n_ctx, n_kv_dim] f32 or packed f16
};

struct VkLlama::Impl {
    std::unique_ptr<vk::Context> ctx;  // first member: destroyed last
    std::unique_ptr<vk::Kernels> kernels;
    std::unique_ptr<vk::Recorder> rec;
    vk::DeviceWeight token_embd, output;  // output unused when tied
    vk::Buffer output_norm;               // [n_embd]
    std::vector<VkLayer> layers;

    // Activations, grown on demand (capacity in tokens / outputs / table entries).
    uint32_t cap_tok = 0, cap_out = 0;
    uint64_t cap_table = 0;
    vk::Buffer ids, cs, cells,
        out_ids;            // host: [n_tok] int, [n_tok, n_rot/2, 2] f32, [n_tok] int, [n_out] int
    vk::Buffer spans;       // host: [n_tok, 2] u32 (first table entry, count) per token
    vk::Buffer cell_table;  // host: [n_entries] u32 cells each span lists (KvCells::cell_table)
    vk::Buffer x, xb, q, k, v, att, proj;  // [n_tok, n_embd or n_kv_dim] f32
    vk::Buffer g, u, ff;                   // [n_tok, n_ff] f32
    vk::Buffer att_part;  // split-K attention partials [n_tok, n_head, n_split, head_dim + 2] f32
    vk::Buffer xo, xo_norm;  // [n_out, n_embd] f32
    vk::Buffer logits;       // [n_out, n_vocab] f32 device
    vk::Buffer readback;     // [n_out, n_vocab] f32 host
};

}  // namespace wb::model
