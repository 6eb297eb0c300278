#pragma once
// Per-op wall time of a graph on a host backend: an Ops that forwards every
// call to the executor's own Ops and adds the call's steady-clock time to a
// model::Profile (op name -> calls, ms). What `bench --profile` prints for the
// CPU backend, the host counterpart of the Vulkan backend's timestamp
// queries. The executor's ops finish their work (thread pool joined)
// before they return, so a call's wall time is that op's time.

#include <functional>
#include <string>

#include "model/graph.h"
#include "model/profile.h"

namespace wb::model {

/// Forwards to `inner`, timing each op into `profile`. `matmul_name(w)`
/// names a matmul's row ("matmul q4_0"); the other rows are the op's name
/// ("attention", "rms_norm", ...). act() is not timed (a lookup). Holds
/// references only: `inner`, `profile` and `matmul_name` must outlive it.
/// Throws what `inner` throws.
class TimedOps final : public Ops {
  public:
    TimedOps(Ops& inner, model::Profile& profile, std::function<std::string(MatId)> matmul_name)
        : inner_(inner), profile_(profile), matmul_name_(std::move(matmul_name)) {}

    Act act(const char* name, uint32_t width, Rows rows) override;
    void embed(Act y, MatId table, float scale) override;
    void rms_norm(Act y, Act x, VecId g, float eps) override;
    void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) override;
    void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) override;
    void matmul(Act y, Act x, MatId w) override;
    void add_bias(Act y, VecId b) override;
    void rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
              const RopeConfig& rope) override;
    void kv_write(uint32_t layer, Act k, Act v) override;
    void attention(Act o, Act q, const AttnParams& p) override;
    void glu(Act y, Act gate, Act up, FfnActivation act) override;
    void add(Act x, Act b) override;
    void gather_outputs(Act y, Act x) override;
    void softcap(Act x, float cap) override;
    void logits(Act x) override;

  private:
    /// Runs fn and adds its wall time in ms to the row `op`.
    template <typename Fn>
    void timed(const std::string& op, Fn&& fn);

    Ops& inner_;
    model::Profile& profile_;
    std::function<std::string(MatId)> matmul_name_;
};

}  // namespace wb::model
