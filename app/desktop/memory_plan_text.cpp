#include "desktop/memory_plan_text.h"

#include <QObject>
#include <algorithm>
#include <exception>

#include "desktop/units_text.h"
#include "gguf/gguf.h"
#include "loader/devices.h"
#include "model/model.h"
#include "model/model_desc.h"

namespace wb::gui {

QString context_fit_text(uint32_t fit, uint32_t n_ctx_train) {
    if (fit == 0) return QObject::tr("no context fits (not even 256 tokens)");
    if (n_ctx_train == 0) return QObject::tr("context fits up to %1 tokens").arg(count_text(fit));
    if (fit >= n_ctx_train)
        return QObject::tr("full %1-token context fits").arg(count_text(n_ctx_train));
    return QObject::tr("context fits up to %1 of %2 tokens")
        .arg(count_text(fit), count_text(n_ctx_train));
}

PlanText plan_text(const QString& path, int n_ctx, int n_seq, qint64 device_bytes, bool cpu_device,
                   bool host_backend, const QString& kv_type) {
    PlanText out;
    try {
        const gguf::File f = gguf::File::open(path.toStdString());
        const model::ModelDesc d = model::ModelDesc::from_gguf(f);
        model::ContextParams cp;
        cp.n_ctx = static_cast<uint32_t>(std::max(n_ctx, 1));
        cp.n_seq_max = static_cast<uint32_t>(std::max(n_seq, 1));
        cp.kv_type = model::parse_kv_type(kv_type.toStdString()).value_or(model::KvType::F16);
        const model::GpuDevice k = model::GpuDevice::generic(cpu_device);
        const model::MemoryNeed need = host_backend
                                           ? model::plan_memory_host(d, cp)
                                           : model::plan_gpu_memory(d, cp, model::PlanShape{}, k);
        out.tooltip = (host_backend ? QObject::tr("Host memory the CPU backend holds for context "
                                                  "size %1 (%2 KV cache):\n")
                                    : QObject::tr("Device memory the engine allocates for context "
                                                  "size %1 (%2 KV cache, 512-token ubatch):\n"))
                          .arg(count_text(cp.n_ctx), QString(model::kv_type_name(cp.kv_type))) +
                      QObject::tr(
                          "weights %1\nKV cache %2\nactivations %3\nstaging %4\n"
                          "(workbench-cli plan shows more)")
                          .arg(bytes_text(need.weights), bytes_text(need.kv_cache),
                               bytes_text(need.activations), bytes_text(need.staging));
        if (device_bytes <= 0) {
            out.need = bytes_text(need.total());
            out.text = QObject::tr("model needs %1").arg(out.need);
            return out;
        }
        const uint32_t best = model::largest_gpu_context(
            d, cp, model::PlanShape{}, k, static_cast<uint64_t>(device_bytes), 1u << 22);
        out.fits = need.total() <= static_cast<uint64_t>(device_bytes);
        const uint32_t n_ctx_train = d.hp.n_ctx_train;
        // The device's size is beside it in the model bar ("8.00 GiB device
        // memory"): the text says what the model needs and what that leaves.
        out.need = bytes_text(need.total());
        out.context = context_fit_text(best, n_ctx_train);
        out.text = QObject::tr("model needs %1 · %2").arg(out.need, out.context);
        out.tooltip += QObject::tr("\n\nThe device has %1.")
                           .arg(bytes_text(static_cast<uint64_t>(device_bytes)));
        out.tooltip += QObject::tr(
                           "\n\nLargest context that fits in device memory: %1 tokens "
                           "(KV cells shared by %2 parallel sequences).")
                           .arg(count_text(best))
                           .arg(cp.n_seq_max);
        if (n_ctx_train > 0)
            out.tooltip += QObject::tr(
                               " The model was trained on %1 tokens; a longer context "
                               "is beyond its training.")
                               .arg(count_text(n_ctx_train));
    } catch (const std::exception& e) {
        out.text.clear();
        out.need.clear();
        out.context.clear();
        out.tooltip = QString::fromUtf8(e.what());
    }
    return out;
}

}  // namespace wb::gui
