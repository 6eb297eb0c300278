#include "memory_plan_text.h"

#include <QObject>
#include <algorithm>
#include <exception>

#include "gguf/gguf.h"
#include "model/memory_plan.h"
#include "model/model_desc.h"
#include "vk/kernels.h"

namespace wb::gui {

namespace {

QString gib(uint64_t b) {
    return QStringLiteral("%1 GiB").arg(static_cast<double>(b) / (uint64_t{1} << 30), 0, 'f', 2);
}

}  // namespace

PlanText plan_text(const QString& path, int n_ctx, int n_seq, qint64 device_bytes,
                   bool cpu_device) {
    PlanText out;
    try {
        const gguf::File f = gguf::File::open(path.toStdString());
        const model::ModelDesc d = model::ModelDesc::from_gguf(f);
        model::ContextParams cp;
        cp.n_ctx = static_cast<uint32_t>(std::max(n_ctx, 1));
        cp.n_seq_max = static_cast<uint32_t>(std::max(n_seq, 1));
        const vk::KernelConfig k{64, cpu_device, cpu_device};
        const model::MemoryNeed need = model::plan_memory(d, cp, model::PlanShape{}, k);
        out.tooltip = QObject::tr(
                          "Device memory the engine allocates for context size %1 (F32 KV "
                          "cache, 512-token ubatch):\nweights %2\nKV cache %3\n"
                          "activations %4\nstaging %5\n(workbench-cli plan shows more)")
                          .arg(cp.n_ctx)
                          .arg(gib(need.weights), gib(need.kv_cache), gib(need.activations),
                               gib(need.staging));
        if (device_bytes <= 0) {
            out.text = QObject::tr("needs %1").arg(gib(need.total()));
            return out;
        }
        const uint32_t best = model::largest_context(d, cp, model::PlanShape{}, k,
                                                     static_cast<uint64_t>(device_bytes), 1u << 22);
        out.fits = need.total() <= static_cast<uint64_t>(device_bytes);
        out.text = QObject::tr("needs %1 of %2 · max context %3")
                       .arg(gib(need.total()), gib(static_cast<uint64_t>(device_bytes)))
                       .arg(best);
    } catch (const std::exception& e) {
        out.text.clear();
        out.tooltip = QString::fromUtf8(e.what());
    }
    return out;
}

}  // namespace wb::gui
