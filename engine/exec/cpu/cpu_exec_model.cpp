// CpuExecModel: weights in place in the mapping, f32 vectors, the KV cache.
// The ops are in cpu_exec_ops.cpp.

#include "exec/cpu/cpu_exec_model.h"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "exec/cpu/axpy.h"
#include "exec/cpu/huge_buffer.h"
#include "ggml/types.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace wb::model {

namespace {

/// Lets the kernel take back the whole pages of the file mapping inside
/// [p, p + n): a repacked part is never read from the mapping again, so the
/// model's weights are resident once, not twice (MADV_DONTNEED on a private
/// read-only file mapping drops the pages from this process; a later read
/// would map them in again from the file, so nothing is lost if one does).
void drop_mapped_pages(const uint8_t* p, size_t n) noexcept {
#if defined(__linux__)
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    const auto mask = ~(static_cast<uintptr_t>(page) - 1);
    const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(page) - 1) & mask;
    const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) & mask;
    if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);  // advice only
#else
    static_cast<void>(p);
    static_cast<void>(n);
#endif
}

}  // namespace

CpuExecModel::CpuExecModel(gguf::File file, const ContextParams& ctx, const CpuExecOptions& opts)
    : file_(std::move(file)),
      desc_(ModelDesc::from_gguf(file_)),
      ctx_(ctx),
      cells_(ctx.n_ctx, ctx.n_seq_max, desc_.hp.n_vocab, ctx.kv_block_size),
      isa_(opts.isa),
      int8_acts_(opts.int8_activations),
      pool_(cpu::ThreadPool::shared(opts.threads)) {
    if (const std::string p = kv_type_problem(ctx.kv_type, desc_.hp.head_dim); !p.empty())
        throw std::invalid_argument(p);
    for (const MatDesc& m : desc_.mats) {
        cpu::Weight w;
        w.ne0 = m.ne0;
        w.rows = m.rows;
        for (uint32_t p : m.parts) {
            const TensorRef& t = desc_.tensors[p];
            const cpu::WeightPart part{t.type, t.data, t.ne1, ggml::row_bytes(t.type, t.ne0)};
            const cpu::WeightKernel* k = cpu::weight_kernel(t.type, isa_);
            const size_t block = cpu::interleave_block_bytes(t.type);
            if (!opts.repack || !k || !k->dot_x8 || part.rows < cpu::kGroupRows || block == 0 ||
                part.row_bytes % block != 0) {
                w.parts.push_back(part);
                continue;
            }
            // Whole groups go to a repacked copy; the rest stay in the mapping.
            const uint64_t groups = part.rows / cpu::kGroupRows;
            const size_t group_bytes = cpu::kGroupRows * part.row_bytes;
            // Left uninitialized (every byte is written below, by the pool's
            // threads): zeroing it first was a single-threaded pass over
            // the whole model at load.
            uint8_t* copy = repacked_.emplace_back(cpu::alloc_huge(groups * group_bytes)).get();
            pool_->run(static_cast<uint32_t>(groups), [&](uint32_t g, unsigned) {
                cpu::interleave_group(t.type, part.data + g * group_bytes, part.row_bytes,
                                      copy + g * group_bytes);
            });
            drop_mapped_pages(part.data, groups * group_bytes);
            cpu::WeightPart packed = part;
            packed.data = copy;
            packed.rows = groups * cpu::kGroupRows;
            packed.layout = cpu::Layout::Interleaved8;
            w.parts.push_back(packed);
            if (packed.rows < part.rows)
                w.parts.push_back({t.type, part.data + packed.rows * part.row_bytes,
                                   part.rows - packed.rows, part.row_bytes});
        }
        mats_.push_back(std::move(w));
    }
    for (const VecDesc& v : desc_.vecs) {
        std::vector<float> out;
        for (uint32_t p : v.parts) {
            const TensorRef& t = desc_.tensors[p];
            const size_t base = out.size();
            out.resize(base + t.ne0 * t.ne1);
            ggml::dequantize_row(t.type, t.data, out.data() + base, t.ne0 * t.ne1, t.name);
        }
        vecs_.push_back(std::move(out));
    }
    // The cache holds what its type holds (an f16 cache is half the bytes
    // of an f32 one, a q8_0 one 34 bytes per 32 values), and keys are read
    // by the weight kernel of that type: a block-quantized key row meets the
    // query quantized to int8, as a weight row meets activations (llama.cpp's
    // CPU flash attention converts q to the K type's vec_dot type likewise).
    const size_t kv = size_t{cells_.size()} * kv_row_bytes(ctx_.kv_type, desc_.hp.kv_dim());
    k_cache_.assign(desc_.hp.n_layer, std::vector<uint8_t>(kv, 0));
    v_cache_.assign(desc_.hp.n_layer, std::vector<uint8_t>(kv, 0));
    k_dot_ = cpu::weight_kernel(kv_ggml_type(ctx_.kv_type), isa_);
    if (!k_dot_) throw std::logic_error("CpuExecModel: no dot kernel for the KV cache type");
    // Block-quantized value rows are expanded to f32 (one head's row, per
    // task) and added by the f32 kernel.
    v_axpy_ = cpu::axpy_kernel(ctx_.kv_type == KvType::F16, isa_);
    f16_store_ = cpu::f16_store_kernel(isa_);
    // Keys of f16 or f32 go through the span kernel; block-quantized ones
    // meet the int8 query through k_dot_ per key.
    if (ctx_.kv_type == KvType::F16 || ctx_.kv_type == KvType::F32)
        k_scores_ = cpu::scores_kernel(ctx_.kv_type == KvType::F16, isa_);
    softmax_ = cpu::softmax_kernel(isa_);
    silu_glu_ = cpu::silu_glu_kernel(isa_);
    attn_scratch_.resize(pool_->size());
    attn_qbuf_.resize(pool_->size());
}

CpuExecModel::~CpuExecModel() = default;

bool CpuExecOptions::default_repack() noexcept {
    const char* v = std::getenv("WB_CPU_REPACK");
    return v == nullptr || std::string_view(v) != "0";
}

MemoryReport CpuExecModel::memory_report() const {
    MemoryReport r;
    for (const cpu::Weight& w : mats_)
        for (const cpu::WeightPart& p : w.parts) r.weights += p.rows * p.row_bytes;
    for (const auto& v : vecs_) r.weights += v.size() * sizeof(float);
    for (size_t l = 0; l < k_cache_.size(); ++l)
        r.kv_cache += k_cache_[l].size() + v_cache_[l].size();
    return r;
}

}  // namespace wb::model
