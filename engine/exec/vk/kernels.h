#pragma once
// vk::Kernels: every compute op of the llama graph as a typed call that
// records one dispatch (or one per weight piece) into a Recorder. Builds
// each pipeline on first use from the embedded SPIR-V, choosing the
// variant and workgroup size from the device's capabilities:
//   - quant weights read as uint16 (16-bit storage) or uint32 words;
//   - reduction workgroups a power of two >= the subgroup size;
//   - mat x vec reduces with subgroupAdd where the device has subgroup
//     arithmetic in compute shaders, else through shared memory;
//   - the tiled mat x mat only where 256 invocations and 16 KiB of shared
//     memory are available (else mat x vec over all tokens).
// All activations are f32, row-major; shapes are in each call's comment.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/vk/buffer.h"
#include "exec/vk/context.h"
#include "exec/vk/pipeline.h"
#include "exec/vk/recorder.h"
#include "exec/vk/weights.h"

namespace wb::vk {

/// Which matrix-multiplication shader mul_mat uses: Auto picks VecTexel
/// on CPU devices at every token count where the call can use it (see
/// Kernels::texel_ok; on lavapipe it beats Mat about 6x at 64 tokens);
/// otherwise Mat for more than vec_max_tokens() tokens (where the device
/// allows it), else VecRow on CPU devices and Vec elsewhere. Vec: one workgroup per output
/// row with a shared-memory reduction (GPUs); VecRow: one invocation per
/// row, no barriers (lavapipe); VecTexel: one invocation per few rows,
/// weights and x read as 16-byte texels (lavapipe,
/// shaders/matvec_texel.comp); Mat: tiled mat x mat.
enum class MatPath { Auto, Vec, VecRow, Mat, VecTexel };

/// Attention shape for one call.
struct AttentionShape {
    uint32_t n_tok = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
    uint32_t kv_stride = 0;  ///< values per cache row (n_head_kv * head_dim)
    uint32_t q_stride = 0;   ///< floats per token row of q
    uint32_t o_stride = 0;   ///< floats per token row of o
    float scale = 1.0f;      ///< multiplies q.k (1 / sqrt(head_dim) in most models)
    uint32_t max_span = 0;   ///< longest span (cells) of any token; chooses the split
    uint32_t window = 0;     ///< > 0: each token sees only the last `window` cells of its span
    float softcap = 0.0f;    ///< > 0: score s becomes softcap * tanh(s / softcap) (gemma2)

    /// Cells the longest span covers after the window.
    uint32_t effective_span() const { return window > 0 && max_span > window ? window : max_span; }
};

/// Element layout of the KV cache the kv_write and attention shaders read
/// and write (model::KvType on the device): f32; binary16 pairs packed in
/// uint32 words; or ggml's blocks of 32 values (Q8_0: 34 bytes, f16 scale
/// and 32 int8; Q4_0: 18 bytes, f16 scale and 32 nibbles), packed back to
/// back from byte 0 of the buffer (ggml-quants.h block_q8_0 / block_q4_0).
enum class KvFormat { F32, F16, Q8_0, Q4_0 };

/// Which attention shader runs: Group, a workgroup per (head, token,
/// chunk) with shared-memory reductions (GPUs); Row, an invocation per
/// (head, chunk) with no barriers (CPU devices). Auto: Row on CPU devices.
enum class AttnPath { Auto, Group, Row };

/// How one attention call runs (Kernels::plan_attention). With n_split > 1
/// each (token, head)'s span is cut into chunks of `chunk` cells computed
/// by separate workgroups and merged by a second dispatch (split-K, as in
/// flash-decoding: Dao et al., "Flash-Decoding for long-context
/// inference", 2023), so a decode step over a long context keeps the
/// device busy with more than n_head workgroups.
struct AttentionPlan {
    AttnPath path = AttnPath::Group;  ///< Group or Row (never Auto)
    uint32_t n_split = 1;             ///< chunks per span, 1..kMaxAttnSplit
    uint32_t chunk = 0;               ///< cells per chunk (n_split > 1)
};

/// The device facts that choose shader variants and attention splits
/// (Kernels::config_for): what the memory planner needs to size buffers
/// the way Kernels will, without creating a device.
struct KernelConfig {
    uint32_t wg_reduce = 64;   ///< reduction workgroup size
    bool vec_per_row = false;  ///< CPU device: row-per-invocation mat x vec and attention
    bool loop_budget = false;  ///< CPU device: llvmpipe's shader loop limit applies
};

class Kernels {
  public:
    /// Pipelines for `ctx`'s device (built lazily). `allow_subgroup_ops`
    /// false keeps the shared-memory reductions even where the device has
    /// subgroup arithmetic (the tests run both variants on one device).
    explicit Kernels(Context& ctx, bool allow_subgroup_ops = true);
    ~Kernels();

    /// Tokens one mat x vec workgroup (Vec) or invocation (VecRow) handles:
    /// each weight value is read once for all of them (NT in
    /// shaders/matvec.comp and matvec_row.comp; the two must agree).
    static constexpr uint32_t kVecTokensPerGroup = 8;
    /// Tokens up to which Auto uses mat x vec, beyond it mat x mat: one
    /// group (kVecTokensPerGroup) on GPUs, where the tiled mat x mat wins
    /// beyond that (llama.cpp's mul_mat_vec stops at 8 columns too);
    /// kVecMaxTokensCpu on CPU devices (lavapipe) for calls the texel
    /// mat x vec cannot take, where mat x mat's shared memory and barriers
    /// cost more than re-reading cached weights.
    uint32_t vec_max_tokens() const { return vec_max_tokens_; }
    static constexpr uint32_t kVecMaxTokensCpu = 32;
    /// Largest head_dim attention supports (shared-memory arrays).
    static constexpr uint32_t kMaxHeadDim = 256;
    /// Most chunks one span is split into (bounds the partials buffer).
    static constexpr uint32_t kMaxAttnSplit = 16;

    /// y[t, r] = sum_k W[r, k] x[t, k] for t < n_tok, r < W.n_rows().
    /// x: floats at x_off + t * x_stride (ne0 each); y: floats at
    /// y_off + t * y_stride + r. One dispatch per weight piece.
    void mul_mat(Recorder& rec, const DeviceWeight& w, const Buffer& x, uint32_t x_off,
                 uint32_t x_stride, Buffer& y, uint32_t y_off, uint32_t y_stride, uint32_t n_tok,
                 MatPath path = MatPath::Auto);
    /// y[i, :] = W[ids[i], :] dequantized; ids: [n_ids] int32; y: [n_ids, W.ne0()].
    void get_rows(Recorder& rec, const DeviceWeight& w, const Buffer& ids, uint32_t n_ids,
                  Buffer& y);
    /// y[i, :] = src[ids[i], :] for an f32 activation src: [n_rows, ne0]
    /// (picks the rows whose logits are wanted); y: [n_ids, ne0].
    void gather_rows(Recorder& rec, const Buffer& src, uint32_t ne0, uint32_t n_rows,
                     const Buffer& ids, uint32_t n_ids, Buffer& y);
    /// y = RMSNorm(x) * g; x, y: [n_tok, n]; g: [n].
    void rms_norm(Recorder& rec, const Buffer& x, const Buffer& g, Buffer& y, uint32_t n,
                  uint32_t n_tok, float eps);
    /// Residual add then RMSNorm in one dispatch: x += b, then
    /// y = RMSNorm(x) * g (the same result as add() then rms_norm()).
    /// x (updated in place), b, y: [n_tok, n] f32; g: [n] f32.
    void add_rms_norm(Recorder& rec, Buffer& x, const Buffer& b, const Buffer& g, Buffer& y,
                      uint32_t n, uint32_t n_tok, float eps);
    /// RoPE in place on the heads of Q and K of the same tokens, in one
    /// dispatch (see shaders/rope.comp): q: [n_tok, q_stride] with n_head
    /// heads from column 0, k: [n_tok, k_stride] with n_head_kv heads from
    /// column k_offset (q and k may be one buffer: the fused QKV output);
    /// cs: [n_tok, n_rot/2, 2] (cos, sin). Throws std::invalid_argument for
    /// an odd n_rot or n_rot > head_dim.
    void rope_qk(Recorder& rec, Buffer& q, Buffer& k, const Buffer& cs, uint32_t n_tok,
                 uint32_t n_head, uint32_t n_head_kv, uint32_t head_dim, uint32_t n_rot,
                 uint32_t q_stride, uint32_t k_stride, bool neox, uint32_t k_offset = 0,
                 uint32_t q_offset = 0);
    /// The KV-cache write of K and V in one dispatch: k_cache[slots[t], :] =
    /// k[k_off + t * src_stride, n values] and v_cache[slots[t], :] likewise
    /// from v at v_off; k, v: f32 rows of src_stride floats (may be one
    /// buffer: the fused QKV output); slots: [n_tok] int32 cells; caches:
    /// [n_ctx, n] values in format `kv` (quantized per block of 32 as
    /// ggml's quantize_row_q8_0_ref / _q4_0_ref; bytes of cells not in
    /// `slots` are left as they were). Throws std::invalid_argument for F16
    /// with odd n, or a block format with n not a multiple of 32.
    void kv_write_kv(Recorder& rec, const Buffer& k, uint32_t k_off, const Buffer& v,
                     uint32_t v_off, uint32_t src_stride, const Buffer& slots, Buffer& k_cache,
                     Buffer& v_cache, uint32_t n, uint32_t n_tok, KvFormat kv);
    /// The shader and split for one attention call of shape `s` on this
    /// device. Splits a span into chunks (split-K) for two reasons:
    ///  - speed (Group only): the call has fewer (token, head) pairs than
    ///    the kAttnBusyGroups workgroups a GPU needs to stay busy, and
    ///    s.max_span holds at least two chunks of kAttnMinChunk cells (Row
    ///    runs on CPU devices, where the merge costs what the split gains);
    ///  - correctness on CPU devices: Mesa's llvmpipe ends every loop of a
    ///    shader invocation once they have run 65535 iterations in all
    ///    (LP_MAX_TGSI_LOOP_ITERATIONS, gallivm/lp_bld_limits.h), silently,
    ///    so there each chunk is kept under kCpuLoopBudget iterations.
    /// At most kMaxAttnSplit chunks. Auto picks Row on CPU devices unless
    /// its chunks would not fit that bound or the partials would pass
    /// kMaxAttnPartialBytes; then Group. `path` forces the shader (tests run
    /// both on one device). Throws std::invalid_argument when no split of
    /// at most kMaxAttnSplit chunks fits the loop budget (a span of about
    /// 150 000 cells for Group on a CPU device).
    AttentionPlan plan_attention(const AttentionShape& s, AttnPath path = AttnPath::Auto) const;
    /// The same plan for a device described by `cfg` (no device needed).
    static AttentionPlan plan_attention(const AttentionShape& s, const KernelConfig& cfg,
                                        AttnPath path = AttnPath::Auto);
    /// What Kernels chooses on device `d` (ContextOptions::gpu_kernels
    /// forces the GPU variants on a CPU device).
    static KernelConfig config_for(const DeviceInfo& d, bool gpu_kernels = false);
    static constexpr uint32_t kAttnBusyGroups = 128;
    static constexpr uint32_t kAttnMinChunk = 128;
    static constexpr uint64_t kCpuLoopBudget = 60000;  ///< under llvmpipe's 65535, with margin
    static constexpr uint64_t kMaxAttnPartialBytes = 64ull << 20;
    /// Bytes of the partials buffer attention() needs for `plan`:
    /// n_tok * n_head * n_split * (head_dim + 2) floats; 0 without a split.
    static uint64_t attention_partials_bytes(const AttentionShape& s, const AttentionPlan& plan);
    /// o[t, head h] = softmax(q[t, h] K^T * scale) V over the cells of token
    /// t's span, per head with GQA (see shaders/attention.comp,
    /// attention_row.comp and, for plan.n_split > 1, attention_merge.comp).
    /// q: [n_tok, q_stride] f32; k_cache, v_cache: [n_ctx, kv_stride]
    /// values in format `kv`; cell_table: [n_entries] u32 cell indices;
    /// spans: [n_tok, 2] u32 (first entry, count >= 1), as
    /// model::KvCells::cell_table builds them; o: [n_tok, o_stride] f32;
    /// partials: scratch of attention_partials_bytes(s, plan) bytes, only
    /// read when plan.n_split > 1 (may be null otherwise).
    /// Throws std::invalid_argument for head_dim > kMaxHeadDim, n_head not
    /// a multiple of n_head_kv, a block format with head_dim not a
    /// multiple of 32, a plan with path Auto or a split out of range, or a
    /// missing or short partials buffer.
    void attention(Recorder& rec, const Buffer& q, const Buffer& k_cache, const Buffer& v_cache,
                   const Buffer& cell_table, const Buffer& spans, Buffer& o,
                   const AttentionShape& s, KvFormat kv, const AttentionPlan& plan,
                   Buffer* partials = nullptr);
    /// y[t, i] = silu(g[g_off + t * in_stride + i]) * u[u_off + t * in_stride + i]
    /// for i < n, t < n_tok; g and u may be one buffer (the fused gate/up
    /// output [n_tok, 2 n_ff]); y: [n_tok, n] f32.
    void swiglu(Recorder& rec, const Buffer& g, uint32_t g_off, const Buffer& u, uint32_t u_off,
                uint32_t in_stride, Buffer& y, uint32_t n, uint32_t n_tok);
    /// The same with GELU (tanh approximation) instead of SiLU: GeGLU (gemma).
    void geglu(Recorder& rec, const Buffer& g, uint32_t g_off, const Buffer& u, uint32_t u_off,
               uint32_t in_stride, Buffer& y, uint32_t n, uint32_t n_tok);
    /// a += b over n floats.
    void add(Recorder& rec, Buffer& a, const Buffer& b, uint32_t n);
    /// Per-head RMSNorm in place: for t < n_tok, h < n_head, the head_dim
    /// floats at x[off + t * stride + h * head_dim] become RMSNorm(head) * g;
    /// g: [head_dim] f32 (QK-norm, see shaders/head_norm.comp).
    void head_rms_norm(Recorder& rec, Buffer& x, uint32_t off, uint32_t stride, const Buffer& g,
                       uint32_t head_dim, uint32_t n_head, uint32_t n_tok, float eps);
    /// y[off + t * stride + i] += b[i] for i < n, t < n_rows; b: [n] f32.
    void add_bias(Recorder& rec, Buffer& y, uint32_t off, uint32_t stride, const Buffer& b,
                  uint32_t n, uint32_t n_rows);
    /// x[i] *= c over n floats.
    void scale(Recorder& rec, Buffer& x, uint32_t n, float c);
    /// x[i] = cap * tanh(x[i] / cap) over n floats (cap > 0).
    void softcap(Recorder& rec, Buffer& x, uint32_t n, float cap);

    /// Whether mat x vec can read `w` through texel views (MatPath::
    /// VecTexel) with x at float offset x_off and row stride x_stride: the
    /// type has a matvec_texel variant, ne0 is a multiple of 32, x_off and
    /// x_stride are multiples of 4 (whole texels) and every piece of w fits
    /// the device's maxTexelBufferElements.
    bool texel_ok(const DeviceWeight& w, uint32_t x_off, uint32_t x_stride) const;
    /// Rows per invocation and invocations per workgroup of VecTexel.
    static constexpr uint32_t kTexelRows = 2;
    static constexpr uint32_t kTexelWorkgroup = 64;

    /// Compute pipelines created so far (they are created on first use)
    /// and the wall time that took, in ms: shader module, layouts and
    /// vkCreateComputePipelines, i.e. the driver's compile, or a lookup in
    /// the pipeline cache when Context's on-disk cache already had it.
    /// The driver's compiles run on up to `compile_threads` threads beside
    /// the recording (vk::CompileQueue; WB_VK_PIPELINE_THREADS=0 compiles
    /// each on first use, one after another), so create_ms is the host
    /// time blocked on pipelines (building modules and layouts, waiting
    /// for compiles) and compile_ms the sum of the compiles' own times.
    struct PipelineStats {
        uint32_t created = 0;
        double create_ms = 0.0;
        double compile_ms = 0.0;
        uint32_t compile_threads = 0;  ///< 0: compiled on first use, in the caller
    };
    PipelineStats pipeline_stats() const;

    /// The tiled mat x mat shader can run on this device.
    bool has_mat_mat() const { return mat_mat_ok_; }
    /// Whether mat x vec (MatPath::Vec) reduces with subgroup operations.
    bool uses_subgroup_ops() const { return subgroup_ops_; }
    uint32_t reduction_workgroup() const { return wg_reduce_; }

  private:
    /// The pipeline of `variant` with workgroup size `wg` (specialization
    /// constant 0; none when 0) and `extra` constants at ids 1, 2, ...
    /// `bindings`: kind of each binding (empty: all storage buffers).
    const Pipeline& get(const std::string& variant, uint32_t n_buffers, uint32_t push_bytes,
                        uint32_t wg, const std::vector<uint32_t>& extra = {},
                        const std::vector<Binding>& bindings = {});
    void mul_mat_texel(Recorder& rec, const DeviceWeight& w, const Buffer& x, uint32_t x_off,
                       uint32_t x_stride, Buffer& y, uint32_t y_off, uint32_t y_stride,
                       uint32_t n_tok);
    /// `access`: block types' variants carry the word-access suffix
    /// (_u16/_u32); matvec_texel's do not (it reads texels).
    std::string weight_variant(const std::string& shader, uint32_t type, bool access = true) const;
    void groups_1d(uint64_t n, uint32_t wg, uint32_t& gx, uint32_t& gy) const;

    Context& ctx_;
    uint32_t wg_reduce_ = 64;  ///< matvec, rms_norm, attention
    uint32_t wg_elem_ = 256;   ///< elementwise ops
    bool mat_mat_ok_ = false;
    bool vec_per_row_ = false;                      ///< Auto uses matvec_row (CPU devices)
    uint32_t vec_max_tokens_ = kVecTokensPerGroup;  ///< see vec_max_tokens()
    bool subgroup_ops_ = false;                     ///< mat x vec (Vec) uses the matvec_sg variants
    uint32_t wg_row_ = 8;                           ///< attention_row: one subgroup
    bool loop_budget_ = false;                      ///< CPU device: see plan_attention()
    // Declared before pipelines_: a pipeline's destructor waits for its
    // queued compile, so the queue must outlive them.
    std::unique_ptr<CompileQueue> compile_queue_;
    std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
    double create_ms_ = 0.0;  // modules, layouts and in-caller compiles
};

}  // namespace wb::vk
