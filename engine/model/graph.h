#pragma once
// The forward pass as a sequence of ops on named activation buffers. Each
// architecture writes its graph once (engine/model/arch/), as a function
// calling an Ops; the CPU reference (ref_model.cpp) runs each op as plain
// loops, the Vulkan engine (vk_model*.cpp) records each as a shader
// dispatch, and the memory planner (memory_plan.cpp) only notes the buffers it
// asks for. Every op works on all rows of the ubatch at once: the rows of
// an activation are the ubatch's tokens (Rows::Tokens) or the tokens whose
// logits are returned (Rows::Outputs). All activations are f32, row-major.

#include <cstdint>

#include "model/model_desc.h"

namespace wb::model {

/// Whose rows an activation has.
enum class Rows { Tokens, Outputs };

/// Columns [col, col + width) of an executor's buffer `buf`, whose rows
/// are `stride` floats long: a whole buffer (col 0, width == stride) or a
/// slice of one (Q, K, V inside the fused QKV output).
struct Act {
    uint32_t buf = 0;
    uint32_t col = 0;
    uint32_t width = 0;
    uint32_t stride = 0;
    Rows rows = Rows::Tokens;

    /// Columns [c, c + w) of this view.
    Act cols(uint32_t c, uint32_t w) const { return Act{buf, col + c, w, stride, rows}; }
    bool whole() const { return col == 0 && width == stride; }
};

/// One layer's attention settings.
struct AttnParams {
    uint32_t layer = 0;
    uint32_t n_head = 0, n_head_kv = 0, head_dim = 0;
    float scale = 1.0f;    ///< multiplies q.k
    float softcap = 0.0f;  ///< > 0: score s becomes softcap * tanh(s / softcap)
    uint32_t window = 0;   ///< > 0: only the last `window` positions (own included)
};

/// The ops a graph is written in. Shapes use n = the activation's rows.
class Ops {
  public:
    virtual ~Ops() = default;

    /// The activation buffer called `name`, [n, width]. Asking again for
    /// the same name returns the same buffer (graphs reuse buffers across
    /// layers as run.c's RunState does).
    virtual Act act(const char* name, uint32_t width, Rows rows = Rows::Tokens) = 0;

    /// y[t, :] = table[token[t], :] * scale. y: [n_tok, ne0].
    virtual void embed(Act y, MatId table, float scale) = 0;
    /// y = RMSNorm(x) * g (Zhang & Sennrich 2019). x, y: [n, len(g)]; may not alias.
    virtual void rms_norm(Act y, Act x, VecId g, float eps) = 0;
    /// x += b, then y = RMSNorm(x) * g (one fused step on the GPU).
    virtual void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) = 0;
    /// In place on each of the n_head heads of x ([n, n_head * head_dim]):
    /// head = RMSNorm(head) * g, g: [head_dim] (QK-norm of qwen3, gemma3).
    virtual void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) = 0;
    /// y = x W^T: y[t, r] = sum_k W[r, k] x[t, k]. x: [n, ne0]; y: [n, rows].
    virtual void matmul(Act y, Act x, MatId w) = 0;
    /// y[t, :] += b. y: [n, len(b)].
    virtual void add_bias(Act y, VecId b) = 0;
    /// RoPE in place on the first n_rot dims of every head of q ([n_tok,
    /// n_head * head_dim]) and k ([n_tok, n_head_kv * head_dim]) at each
    /// token's position, with the frequencies of `rope` (see RopeConfig).
    virtual void rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
                      const RopeConfig& rope) = 0;
    /// Stores each token's k and v ([n_tok, kv_dim]) in its KV-cache cell of `layer`.
    virtual void kv_write(uint32_t layer, Act k, Act v) = 0;
    /// o = softmax(q K^T * scale [soft-capped]) V per head over the cached
    /// positions each token attends to (its own sequence, pos <= its pos,
    /// within the window); GQA: query head h reads KV head h / (n_head /
    /// n_head_kv). q: [n_tok, n_head * head_dim]; o: same shape.
    virtual void attention(Act o, Act q, const AttnParams& p) = 0;
    /// y = act(gate) * up with act SiLU (SwiGLU) or GELU-tanh (GeGLU).
    /// gate, up, y: [n, n_ff].
    virtual void glu(Act y, Act gate, Act up, FfnActivation act) = 0;
    /// x += b. x, b: [n, width].
    virtual void add(Act x, Act b) = 0;
    /// y[i, :] = x[out_row[i], :]: the rows whose logits are returned.
    /// x: [n_tok, w]; y: [n_out, w] (Rows::Outputs).
    virtual void gather_outputs(Act y, Act x) = 0;
    /// In place: x = cap * tanh(x / cap).
    virtual void softcap(Act x, float cap) = 0;
    /// x ([n_out, n_vocab]) holds the logits the call returns.
    virtual void logits(Act x) = 0;
};

}  // namespace wb::model
