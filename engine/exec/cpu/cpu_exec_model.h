#pragma once
// The CPU executor: the architecture's graph (engine/model/arch/) run on
// the host with the weights left in their GGUF types, read in place from
// the file's mapping (no f32 copy) or, for the types with 8-row kernels,
// interleaved into a copy of the same size at load; activations quantized per block for
// integer dot products, and a thread pool splitting each matmul's output
// rows and each attention's heads (engine/exec/cpu). This is what `--backend
// cpu` runs; the float reference (RefModel, backend "cpu-ref") stays the
// ground truth it is tested against.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/cpu/attn_scores.h"
#include "exec/cpu/axpy.h"
#include "exec/cpu/dot.h"
#include "exec/cpu/f16_store.h"
#include "exec/cpu/glu.h"
#include "exec/cpu/huge_buffer.h"
#include "exec/cpu/isa.h"
#include "exec/cpu/matmul.h"
#include "exec/cpu/softmax.h"
#include "exec/cpu/thread_pool.h"
#include "exec/ref/host_ops.h"
#include "gguf/gguf.h"
#include "kv/kv_cells.h"
#include "model/model.h"
#include "model/model_desc.h"

namespace wb::model {

/// Settings of the CPU executor.
struct CpuExecOptions {
    unsigned threads = 0;  ///< threads, the caller's included; 0 = hardware threads
    /// Kernel ISA; default the best this CPU has (cpu::best_isa(), which
    /// honours WB_CPU_ISA=scalar).
    cpu::Isa isa = cpu::best_isa();
    /// false: quantized weights meet f32 activations (each row dequantized,
    /// much slower); tests use it to tell activation rounding from the rest.
    bool int8_activations = true;
    /// true: F16, Q4_0, Q8_0, Q4_K and Q6_K matrices (rows of whole
    /// interleave blocks) are copied at load into groups of 8 interleaved
    /// rows (cpu/interleave.h; the same bytes, in memory instead of the
    /// mapping) for the 8-row kernels; a matrix's last rows % 8 stay
    /// in the mapping. false: every weight is read in place (WB_CPU_REPACK=0
    /// in the environment sets this default, to compare the two).
    bool repack = default_repack();
    /// false when WB_CPU_REPACK is "0", else true.
    static bool default_repack() noexcept;
};

class CpuExecModel : public Model {
  public:
    /// Takes the open file (its mapping holds the weights for the model's
    /// lifetime), builds the weight table (ModelDesc::from_gguf), converts
    /// only the vectors (norm weights, biases) to f32 and allocates the KV
    /// cache for `ctx`. Throws what ModelDesc::from_gguf throws (gguf::Error
    /// naming a missing or misshapen tensor; ggml::UnsupportedType;
    /// UnsupportedModel) and std::invalid_argument for n_ctx or n_seq_max of 0.
    CpuExecModel(gguf::File file, const ContextParams& ctx, const CpuExecOptions& opts = {});
    ~CpuExecModel() override;

    const HParams& hparams() const override { return desc_.hp; }
    const ContextParams& context() const override { return ctx_; }
    std::string backend_name() const override { return "cpu"; }
    void decode(const Batch& batch, std::vector<float>& logits) override;
    void seq_rm(int32_t seq_id) override { cells_.seq_rm(seq_id); }
    uint32_t n_free_cells() const override { return cells_.n_free(); }
    KvCells& kv_cells() override { return cells_; }
    const KvCells& kv_cells() const override { return cells_; }
    /// Host bytes: weights (the tensor bytes, mapped or repacked, plus the f32 vectors)
    /// and KV cache (2 * n_layer * cells * kv_row_bytes(KvType, kv_dim):
    /// 4 bytes a value f32, 2 f16, 34/32 q8_0, 18/32 q4_0); activations are
    /// not counted;
    /// on_device false.
    MemoryReport memory_report() const override;
    /// Backend "cpu", every device field empty (as the float reference).
    DeviceFacts device_facts() const override { return DeviceFacts{"cpu", {}, {}, {}, {}, {}}; }

    /// Profiling: per-op wall time of decode() (model/timed_ops.h), matmul
    /// rows named by their weight type ("matmul q4_0"); host_times() stay
    /// empty (no recording or submit on this backend).
    bool can_profile() const override { return true; }
    void set_profiling(bool on) override { profiling_ = on; }
    void clear_profile() override { profile_.clear(); }
    const model::Profile& profile() const override { return profile_; }

    /// Threads in the pool (the caller's included).
    unsigned threads() const { return pool_->size(); }
    /// ISA of the kernels.
    cpu::Isa isa() const { return isa_; }

  private:
    friend class CpuExecOps;

    gguf::File file_;  // owns the mapping the weights point into
    ModelDesc desc_;
    ContextParams ctx_;
    KvCells cells_;
    cpu::Isa isa_;
    bool int8_acts_;
    std::shared_ptr<cpu::ThreadPool> pool_;  // the process's pool of this size (ThreadPool::shared)
    cpu::MatmulScratch scratch_;
    bool profiling_ = false;
    model::Profile profile_;                 // summed since clear_profile(), while profiling_
    std::vector<cpu::Weight> mats_;          // [n_mats] parts in the mapping or in repacked_
    std::vector<cpu::HugeBuffer> repacked_;  // interleaved copies of parts (opts.repack)
    std::vector<std::vector<float>> vecs_;   // [n_vecs][n] f32
    // [n_layer][pool cells, kv_row_bytes(ctx_.kv_type, kv_dim)]: f32, f16
    // bits, or ggml q8_0 / q4_0 blocks (a head's values are whole blocks)
    std::vector<std::vector<uint8_t>> k_cache_, v_cache_;
    const cpu::WeightKernel* k_dot_ = nullptr;  // q . k over one cached key row of the cache type
    cpu::AxpyFn v_axpy_ = nullptr;  // out += p * one value row, f32 or f16 (q8_0/q4_0: expanded)
    cpu::F16StoreFn f16_store_ = nullptr;  // rows into an f16 cache
    cpu::ScoresFn k_scores_ = nullptr;   // q . K over a span of f16/f32 keys; nullptr: q8_0/q4_0 K
    cpu::SoftmaxFn softmax_ = nullptr;   // attention's weights
    cpu::SiluGluFn silu_glu_ = nullptr;  // SwiGLU's gate
    std::vector<std::vector<uint8_t>> attn_qbuf_;   // [threads] queries as k_dot_'s activations
    HostActs acts_;                                 // named activations, by Act::buf
    std::vector<std::vector<float>> attn_scratch_;  // [threads][positions] scores
};

}  // namespace wb::model
