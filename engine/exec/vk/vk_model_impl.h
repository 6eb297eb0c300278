#pragma once
// Private to the Vulkan forward pass (vk_model.cpp, vk_model_decode.cpp):
// the device objects behind VkModel.

#include <list>
#include <memory>
#include <string>
#include <vector>

#include "exec/vk/buffer.h"
#include "exec/vk/context.h"
#include "exec/vk/kernels.h"
#include "exec/vk/recorder.h"
#include "exec/vk/vk_model.h"
#include "exec/vk/weights.h"

namespace wb::model {

/// One weight matrix of the table (MatDesc) on the device: its parts
/// stacked as one weight when they share a type (one dispatch for Q|K|V),
/// else one weight per part, each writing its own columns of the output.
struct VkMat {
    std::vector<vk::DeviceWeight> pieces;
    std::vector<uint32_t> col;  ///< [pieces] first output column of each
};

struct VkModel::Impl {
    std::unique_ptr<vk::Context> ctx;  // first member: destroyed last
    std::unique_ptr<vk::Kernels> kernels;
    /// Recorded steps by shape (StepKey), most recently used first, at
    /// most kMaxSteps: decode() replays one whose key matches. Dropped
    /// whenever a buffer they bind is reallocated (ensure()).
    struct Step {
        std::vector<uint32_t> key;  ///< n_tok, n_out, profiling
        /// Attention shapes recorded and their plans (split-K depends on
        /// the longest span, which grows every step).
        std::vector<std::pair<vk::AttentionShape, vk::AttentionPlan>> plans;
        std::unique_ptr<vk::Recorder> rec;
    };
    static constexpr size_t kMaxSteps = 16;
    // A list: moving a hit to the front and adding one there never moves
    // the others (and GCC 12's -O3 -Wnull-dereference misreads the
    // vector insert of a Step).
    std::list<Step> steps;
    std::unique_ptr<vk::Recorder> spare;  ///< the one command buffer when replay is off
    bool replay = true;
    vk::Barriers barriers = vk::Barriers::Tracked;
    std::vector<VkMat> mats;                   // [n_mats] by MatId
    std::vector<vk::Buffer> vecs;              // [n_vecs] f32, by VecId
    std::vector<vk::Buffer> k_cache, v_cache;  // [n_layer] [n_ctx, kv_dim] of ctx.kv_type (vk::KvFormat)

    // The graph's named activations (Ops::act), grown on demand.
    std::vector<std::string> act_names;
    std::vector<vk::Buffer> acts;
    // Host inputs of one ubatch, grown on demand.
    vk::Buffer ids;         // [n_tok] int32 token ids
    vk::Buffer cells;       // [n_tok] int32 cache cell of each token
    vk::Buffer spans;       // [n_tok, 2] u32 (first table entry, count)
    vk::Buffer cell_table;  // [n_entries] u32 cells each span lists (KvCells::cell_table)
    vk::Buffer out_ids;     // [n_out] int32 rows whose logits are returned
    vk::Buffer cs[2];     // [n_tok, n_rot/2, 2] RoPE cos/sin: full-attention, sliding-window layers
    vk::Buffer att_part;  // split-K attention partials
    vk::Buffer readback;  // [n_out, n_vocab] f32 host (staging)
};

}  // namespace wb::model
