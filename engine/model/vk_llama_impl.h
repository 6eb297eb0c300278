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
    vk::Buffer attn_norm, ffn_norm;  // [n_embd] f32
    // Q, K, V projections stacked by rows as one [q_dim + 2 kv_dim, n_embd]
    // weight (one mat x vec dispatch for all three), or three weights when
    // their types differ; likewise gate and up as [2 n_ff, n_embd].
    std::vector<vk::DeviceWeight> qkv;
    std::vector<vk::DeviceWeight> gate_up;
    vk::DeviceWeight wo;          // [n_embd rows, q_dim]
    vk::DeviceWeight down;        // [n_embd rows, n_ff]
    vk::Buffer k_cache, v_cache;  // [n_ctx, n_kv_dim] f32 or packed f16
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
    vk::Buffer x, xb, att, proj;  // [n_tok, n_embd or q_dim] f32
    vk::Buffer qkv;               // [n_tok, q_dim + 2 kv_dim] f32: q | k | v per token
    vk::Buffer gu;                // [n_tok, 2 n_ff] f32: gate | up per token
    vk::Buffer ff;                // [n_tok, n_ff] f32
    vk::Buffer att_part;  // split-K attention partials [n_tok, n_head, n_split, head_dim + 2] f32
    vk::Buffer xo, xo_norm;  // [n_out, n_embd] f32
    vk::Buffer logits;       // [n_out, n_vocab] f32 device
    vk::Buffer readback;     // [n_out, n_vocab] f32 host
};

}  // namespace wb::model
