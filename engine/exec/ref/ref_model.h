#pragma once
// The CPU reference forward pass: the architecture's graph (engine/model/
// arch/) run op by op as plain f32 loops in the style of llama2.c's run.c,
// one buffer per named activation. It is the ground truth the Vulkan
// shaders are checked against, so it favours reading like the math over
// speed (sums of norms and softmax in double).

#include <cstdint>
#include <string>
#include <vector>

#include "exec/ref/host_ops.h"
#include "kv/kv_cells.h"
#include "model/model.h"
#include "model/model_desc.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

class RefModel : public Model {
  public:
    /// Builds the weight table (ModelDesc::from_gguf), dequantizes every
    /// weight to f32 and allocates the KV cache for `ctx`. The File may be
    /// closed afterwards. Throws what ModelDesc::from_gguf throws (gguf::
    /// Error naming a missing, misshapen or unknown tensor;
    /// ggml::UnsupportedType; UnsupportedModel) and std::invalid_argument
    /// for n_ctx, n_seq_max or kv_block_size of 0.
    RefModel(const gguf::File& file, const ContextParams& ctx);

    const HParams& hparams() const override { return desc_.hp; }
    const ContextParams& context() const override { return ctx_; }
    std::string backend_name() const override { return "cpu-ref"; }
    void decode(const Batch& batch, std::vector<float>& logits) override;
    void seq_rm(int32_t seq_id) override { cells_.seq_rm(seq_id); }
    uint32_t n_free_cells() const override { return cells_.n_free(); }
    /// Host bytes of the f32 weights and of the KV cache (activations are
    /// per-call temporaries and not counted); on_device false.
    MemoryReport memory_report() const override;
    /// Backend "cpu", every device field empty.
    DeviceFacts device_facts() const override { return DeviceFacts{"cpu", {}, {}, {}, {}, {}}; }

    KvCells& kv_cells() override { return cells_; }
    const KvCells& kv_cells() const override { return cells_; }
    /// The weight table and hyperparameters the model was built from.
    const ModelDesc& desc() const { return desc_; }
    /// Bytes of the host buffers: weights (f32) and KV cache.
    uint64_t weight_bytes() const;
    uint64_t kv_bytes() const;

  private:
    friend class CpuOps;

    ModelDesc desc_;  // tensors' data pointers are dangling after the constructor
    ContextParams ctx_;
    KvCells cells_;
    std::vector<std::vector<float>> mats_;               // [n_mats][rows, ne0] f32
    std::vector<std::vector<float>> vecs_;               // [n_vecs][n] f32
    std::vector<std::vector<float>> k_cache_, v_cache_;  // [n_layer][pool cells, kv_dim]
    HostActs acts_;                                      // named activations, by Act::buf
};

}  // namespace wb::model
