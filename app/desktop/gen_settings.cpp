#include "desktop/gen_settings.h"

#include <QRandomGenerator>

#include "core/context_size.h"
#include "model/model.h"

namespace wb::gui {

QJsonObject GenSettings::toJson() const {
    QJsonObject o;
    o["temperature"] = temperature;
    o["top_k"] = top_k;
    o["top_p"] = top_p;
    o["min_p"] = min_p;
    o["repeat_penalty"] = repeat_penalty;
    o["repeat_last_n"] = repeat_last_n;
    // JSON numbers are doubles: a 64-bit seed above 2^53 would lose bits.
    o["seed"] = QString::number(seed);
    o["fixed_seed"] = fixed_seed;
    o["max_tokens"] = max_tokens;
    o["n_ctx"] = n_ctx;
    o["n_parallel"] = n_parallel;
    o["kv_type"] = kv_type;
    if (!logit_bias.isEmpty()) {
        QJsonObject bias;
        for (auto it = logit_bias.begin(); it != logit_bias.end(); ++it)
            bias[QString::number(it.key())] = it.value();
        o["logit_bias"] = bias;
    }
    return o;
}

GenSettings GenSettings::fromJson(const QJsonObject& o) {
    GenSettings s;
    s.temperature = o.value("temperature").toDouble(s.temperature);
    s.top_k = o.value("top_k").toInt(s.top_k);
    s.top_p = o.value("top_p").toDouble(s.top_p);
    s.min_p = o.value("min_p").toDouble(s.min_p);
    s.repeat_penalty = o.value("repeat_penalty").toDouble(s.repeat_penalty);
    s.repeat_last_n = o.value("repeat_last_n").toInt(s.repeat_last_n);
    const QJsonValue seed = o.value("seed");
    if (seed.isString()) {
        bool ok = false;
        const quint64 v = seed.toString().toULongLong(&ok);
        if (ok) s.seed = v;
    } else if (seed.isDouble()) {
        s.seed = static_cast<quint64>(seed.toDouble());
    }
    s.fixed_seed = o.value("fixed_seed").toBool(s.fixed_seed);
    s.max_tokens = o.value("max_tokens").toInt(s.max_tokens);
    s.n_ctx = o.value("n_ctx").toInt(s.n_ctx);
    s.n_parallel = o.value("n_parallel").toInt(s.n_parallel);
    // A name this build does not know (an older or newer settings file)
    // keeps the default rather than failing every load.
    const QString kv = o.value("kv_type").toString(s.kv_type);
    if (model::parse_kv_type(kv.toStdString())) s.kv_type = kv;
    const QJsonObject bias = o.value("logit_bias").toObject();
    for (auto it = bias.begin(); it != bias.end(); ++it) {
        bool ok = false;
        const int id = it.key().toInt(&ok);
        if (ok && it.value().isDouble()) s.logit_bias.insert(id, it.value().toDouble());
    }
    return s;
}

QString GenSettings::summary() const {
    const QString bias = logit_bias.isEmpty()
                             ? QString()
                             : QStringLiteral(" · logit bias on %1 tokens").arg(logit_bias.size());
    if (temperature <= 0.0) {
        return QStringLiteral("greedy · rep %1 · max %2 tok%3")
            .arg(repeat_penalty, 0, 'f', 2)
            .arg(max_tokens)
            .arg(bias);
    }
    return QStringLiteral(
               "temp %1 · top-k %2 · top-p %3 · min-p %4 · rep %5 · seed %6 · max %7 tok%8")
        .arg(temperature, 0, 'f', 2)
        .arg(top_k)
        .arg(top_p, 0, 'f', 2)
        .arg(min_p, 0, 'f', 2)
        .arg(repeat_penalty, 0, 'f', 2)
        .arg(seed)
        .arg(max_tokens)
        .arg(bias);
}

GenSettings GenSettings::forRequest(bool new_seed) const {
    GenSettings s = *this;
    if (!fixed_seed || new_seed) s.seed = drawSeed();
    return s;
}

core::GenerationRequest GenSettings::request(core::SeedPolicy seed_policy) const {
    core::GenerationRequest r;
    r.sampling.temperature = static_cast<float>(temperature);
    r.sampling.top_k = top_k;
    r.sampling.top_p = static_cast<float>(top_p);
    r.sampling.min_p = static_cast<float>(min_p);
    r.sampling.repeat_penalty = static_cast<float>(repeat_penalty);
    r.sampling.repeat_last_n = repeat_last_n;
    for (auto it = logit_bias.begin(); it != logit_bias.end(); ++it)
        r.sampling.logit_bias.emplace_back(it.key(), static_cast<float>(it.value()));
    r.max_tokens = max_tokens;
    r.seed = {seed_policy, seed, 0};
    return r;
}

quint64 GenSettings::drawSeed() {
    return QRandomGenerator::system()->generate();
}

QStringList GenSettings::kvTypeNames() {
    QStringList out;
    for (const model::KvType t : model::kv_types())
        out << QString::fromLatin1(model::kv_type_name(t));
    return out;
}

}  // namespace wb::gui

namespace wb::gui {

int GenSettings::poolSize(int n_ctx_train) const {
    if (n_ctx > 0) return n_ctx;
    return static_cast<int>(
        core::pool_for(core::default_context(static_cast<uint32_t>(std::max(n_ctx_train, 0))),
                       static_cast<uint32_t>(std::max(n_parallel, 1))));
}

}  // namespace wb::gui
