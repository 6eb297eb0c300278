#pragma once
// The memory plan of a model file as the model bar shows it, before and
// after loading: what the Vulkan engine will allocate for the chosen context
// (engine/model/memory_plan.h), whether that fits the chosen device, and the
// largest context that would.

#include <QString>
#include <cstdint>

namespace wb::gui {

struct PlanText {
    /// "model needs 1.20 GiB · context fits up to 61,440 of 131,072 tokens"
    /// (the device's size is in the tooltip), or "" when unknown
    QString text;
    QString need;     ///< what the model needs, "1.20 GiB"; "" when unknown
    QString context;  ///< the context part of `text`; "" without a device size
    QString tooltip;  ///< the figures by purpose
    bool fits = true;
};

/// What the largest context that fits says to a user: `fit` KV cells
/// (tokens, from model::largest_context) against the model's trained
/// context `n_ctx_train` (tokens; 0 = not in the file). A fit beyond the
/// trained length reads as the trained length ("full 2,048-token context
/// fits"): longer contexts are outside what the model was trained on.
/// Never throws.
QString context_fit_text(uint32_t fit, uint32_t n_ctx_train);

/// Plan of `path` with `n_ctx` KV cells shared by `n_seq` sequences and KV
/// type `kv_type` (model::kv_type_name; unknown = f16), against `device_bytes` (0 =
/// unknown device: no fit verdict). `cpu_device`: lavapipe-like attention
/// splits. `host_backend`: the CPU backend, planned as its own accounting
/// counts (model::plan_memory_host), so the figure is the one the status
/// bar shows once the model is loaded. Never throws: a file the planner
/// cannot read gives an empty text and the reason as tooltip.
PlanText plan_text(const QString& path, int n_ctx, int n_seq, qint64 device_bytes, bool cpu_device,
                   bool host_backend = false, const QString& kv_type = QStringLiteral("f16"));

}  // namespace wb::gui
