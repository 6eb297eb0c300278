#include "model/timed_ops.h"

#include <chrono>

namespace wb::model {

template <typename Fn>
void TimedOps::timed(const std::string& op, Fn&& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    profile_.add(
        op,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

Act TimedOps::act(const char* name, uint32_t width, Rows rows) {
    return inner_.act(name, width, rows);
}
void TimedOps::embed(Act y, MatId table, float scale) {
    timed("embed", [&] { inner_.embed(y, table, scale); });
}
void TimedOps::rms_norm(Act y, Act x, VecId g, float eps) {
    timed("rms_norm", [&] { inner_.rms_norm(y, x, g, eps); });
}
void TimedOps::add_rms_norm(Act x, Act b, VecId g, Act y, float eps) {
    timed("add_rms_norm", [&] { inner_.add_rms_norm(x, b, g, y, eps); });
}
void TimedOps::head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) {
    timed("head_rms_norm", [&] { inner_.head_rms_norm(x, n_head, head_dim, g, eps); });
}
void TimedOps::matmul(Act y, Act x, MatId w) {
    timed(matmul_name_(w), [&] { inner_.matmul(y, x, w); });
}
void TimedOps::add_bias(Act y, VecId b) {
    timed("add_bias", [&] { inner_.add_bias(y, b); });
}
void TimedOps::rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
                    const RopeConfig& rope) {
    timed("rope", [&] { inner_.rope(q, n_head, k, n_head_kv, head_dim, rope); });
}
void TimedOps::kv_write(uint32_t layer, Act k, Act v) {
    timed("kv_write", [&] { inner_.kv_write(layer, k, v); });
}
void TimedOps::attention(Act o, Act q, const AttnParams& p) {
    timed("attention", [&] { inner_.attention(o, q, p); });
}
void TimedOps::glu(Act y, Act gate, Act up, FfnActivation act) {
    timed("glu", [&] { inner_.glu(y, gate, up, act); });
}
void TimedOps::add(Act x, Act b) {
    timed("add", [&] { inner_.add(x, b); });
}
void TimedOps::gather_outputs(Act y, Act x) {
    timed("gather_outputs", [&] { inner_.gather_outputs(y, x); });
}
void TimedOps::softcap(Act x, float cap) {
    timed("softcap", [&] { inner_.softcap(x, cap); });
}
void TimedOps::logits(Act x) {
    timed("logits", [&] { inner_.logits(x); });
}

}  // namespace wb::model
