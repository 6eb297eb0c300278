#pragma once
// The memory plan of a model file as the model bar shows it, before and
// after loading: what the Vulkan engine will allocate for the chosen context
// (engine/model/memory_plan.h), whether that fits the chosen device, and the
// largest context that would.

#include <QString>

namespace wb::gui {

struct PlanText {
    QString text;     ///< "needs 1.2 GiB of 8.0 GiB · max context 61440", or "" when unknown
    QString tooltip;  ///< the figures by purpose
    bool fits = true;
};

/// Plan of `path` with `n_ctx` KV cells shared by `n_seq` sequences and an
/// F32 KV cache, against `device_bytes` (0 = unknown device: no fit
/// verdict). `cpu_device`: lavapipe-like attention splits. Never throws:
/// a file the planner cannot read gives an empty text and the reason as
/// tooltip.
PlanText plan_text(const QString& path, int n_ctx, int n_seq, qint64 device_bytes, bool cpu_device);

}  // namespace wb::gui
