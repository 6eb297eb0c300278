#pragma once
// The settings a user picks in the settings panel: sampling parameters (the
// same set and defaults as llama.cpp's common sampling params / the CLI's
// generate flags), the per-request token limit and the context the model is
// loaded with. Plain value type, shared by the chat, the batch panel, the
// run log and QSettings persistence.

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

#include "core/generation_request.h"

namespace wb::gui {

/// Generation settings of one request or run.
struct GenSettings {
    double temperature = 0.8;     ///< 0 = greedy (argmax, ties to the lower id)
    int top_k = 40;               ///< 0 = off
    double top_p = 0.95;          ///< 1 = off
    double min_p = 0.05;          ///< 0 = off
    double repeat_penalty = 1.0;  ///< 1 = off (llama.cpp: positive logits divided)
    int repeat_last_n = 64;       ///< tokens the penalty looks back over
    /// RNG seed; same seed + settings = same tokens. With fixed_seed false
    /// (the default) this is only the seed a request used (forRequest()).
    quint64 seed = 42;
    /// true: every request uses `seed`; false: each request draws a new one,
    /// so asking again (Regenerate, a batch item) gives another reply.
    bool fixed_seed = false;
    int max_tokens = 128;  ///< generated tokens per request (>= 1)
    /// Added to the raw logits of these token ids before sampling (the
    /// OpenAI API's logit_bias; sampling::SamplingParams::logit_bias).
    /// Not in the settings panel; empty by default.
    QMap<int, double> logit_bias;
    /// Context: the KV pool's size in tokens, shared by all requests; 0 =
    /// auto (the default): the model's training context per request, at
    /// most 4096, times n_parallel (poolSize(); core/context_size.h, the
    /// CLI's rule).
    int n_ctx = 0;
    int n_parallel = 4;  ///< most requests running at once (sequences in the pool)
    /// KV cache type as model::kv_type_name spells it: "f16" (the default,
    /// as llama.cpp), "f32", or "q8_0" / "q4_0" (about half and a quarter
    /// of f16's bytes; model::kv_types lists them).
    QString kv_type = QStringLiteral("f16");

    /// The settings as a JSON object with the field names above (used for
    /// the run log's settings column and the reply footer).
    QJsonObject toJson() const;
    /// Reads the fields present in `o`; absent ones keep their defaults.
    static GenSettings fromJson(const QJsonObject& o);
    /// Short human line: "temp 0.80 · top-k 40 · top-p 0.95 · min-p 0.05 · seed 42".
    QString summary() const;
    /// The settings one request runs with: a copy whose seed is freshly
    /// drawn (drawSeed()) unless fixed_seed is set and `new_seed` is false.
    /// The copy's seed is what gets logged and shown.
    GenSettings forRequest(bool new_seed = false) const;
    /// A random seed in [0, 2^32) from the system's generator (32 bits, as
    /// llama.cpp draws its default seed: short enough to read and type).
    static quint64 drawSeed();
    /// The names kv_type may hold, the default first (model::kv_types).
    static QStringList kvTypeNames();
    /// A request with these settings and no prompt yet: sampling, max
    /// tokens and the seed (policy `seed_policy`: Fixed = this seed,
    /// BasePlusIndex = this seed + the request's index, as `workbench-cli
    /// batch` seeds its prompts).
    core::GenerationRequest request(core::SeedPolicy seed_policy = core::SeedPolicy::Fixed) const;
    /// The KV pool in tokens a load with these settings gets for a model
    /// trained on `n_ctx_train` tokens (0 = unknown): n_ctx when set, else
    /// core::pool_for(core::default_context(n_ctx_train), n_parallel).
    int poolSize(int n_ctx_train) const;

    bool operator==(const GenSettings&) const = default;
};

}  // namespace wb::gui
