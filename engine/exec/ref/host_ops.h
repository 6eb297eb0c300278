#pragma once
// The graph's ops that are the same on every host (CPU) executor: named
// activation buffers and the row-wise ops (norms, RoPE, GLU, residual adds,
// biases, soft-cap, output gathering, logits). The float reference
// (ref_model.cpp) and the threaded executor (cpu_exec_ops.cpp) derive from
// it and write only what differs: embedding lookup, matmul, KV writes and
// attention. Rows run through for_rows(), serial here; the threaded
// executor spreads them over its pool.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kv/batch.h"
#include "model/graph.h"
#include "model/hparams.h"

namespace wb::model {

/// A host executor's activations: f32 buffers found by name, kept between
/// steps so a ubatch of the same size reuses their storage.
struct HostActs {
    std::vector<std::vector<float>> bufs;  ///< [n_bufs][n_rows, width] row-major, by Act::buf
    std::vector<std::string> names;        ///< [n_bufs] the name each buffer was asked for by
};

/// Row-wise ops of the Ops interface on host buffers (graph.h gives each
/// op's shapes). All math in f32 except RMSNorm's sum of squares, GELU and
/// soft-cap, which use double as the float reference always has.
class HostOps : public Ops {
  public:
    /// `vecs`: the model's vectors ([n_vecs][n] f32, by VecId); `logits`
    /// receives [n_outputs, n_vocab] at logits(). Nothing is copied: every
    /// reference must outlive this object (one decode() call).
    HostOps(HostActs& acts, const std::vector<std::vector<float>>& vecs, const HParams& hp,
            const Batch& batch, std::vector<float>& logits);

    Act act(const char* name, uint32_t width, Rows rows) override;
    void rms_norm(Act y, Act x, VecId g, float eps) override;
    void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) override;
    void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) override;
    void add_bias(Act y, VecId b) override;
    void rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
              const RopeConfig& rc) override;
    void glu(Act y, Act gate, Act up, FfnActivation act) override;
    void add(Act x, Act b) override;
    void gather_outputs(Act y, Act x) override;
    void softcap(Act x, float cap) override;
    void logits(Act x) override;

  protected:
    /// fn(r) for every row r in [0, n_rows) of an activation `width` wide;
    /// serial here, the threaded executor overrides it.
    virtual void for_rows(size_t n_rows, uint32_t width, const std::function<void(size_t)>& fn);

    size_t n_rows(Rows r) const { return r == Rows::Tokens ? batch_.size() : out_rows_.size(); }
    float* row(const Act& a, size_t r) { return acts_.bufs[a.buf].data() + r * a.stride + a.col; }

    const HParams& hp_;
    const Batch& batch_;
    std::vector<size_t> out_rows_;  // [n_out] batch rows whose logits are returned

  private:
    HostActs& acts_;
    const std::vector<std::vector<float>>& vecs_;
    std::vector<float>& logits_;
};

}  // namespace wb::model
