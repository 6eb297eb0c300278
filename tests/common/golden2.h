#pragma once
// llama.cpp's reference runs of the tiny models of every architecture
// (tests/data/golden2, copied from ../shared/golden2; its README, sections
// 2, 4 and 5, describes the models, the records and the tolerances). The
// tests use the `<variant>.dequantf32.kvf32` runs (variant f16, or a
// llama-quantize file type such as q4_k_m): llama.cpp on the variant's
// weights dequantized to float32, with float32 activations and an F32 KV
// cache, the reference for a float engine.

#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/data_dir.h"
#include "common/json_fixtures.h"

namespace wbtest {

/// The 8 tiny models (golden2 README section 2).
inline const std::vector<std::string>& golden2_models() {
    static const std::vector<std::string> m = {"llama-spm", "llama3", "qwen2",  "qwen3",
                                               "phi3",      "gemma2", "gemma3", "smollm-fallback"};
    return m;
}

/// One prompt's record (README section 4, "Fields of each record").
struct Golden2Prompt {
    std::string name;                                        ///< plain, multiline, unicode, chat
    std::vector<int32_t> prompt_ids;                         ///< [n_prompt] BOS included
    std::vector<std::pair<int32_t, double>> first_step_top;  ///< [20] (id, logit), highest first
    std::vector<int32_t> generated;                          ///< [32] greedy ids
    std::vector<std::vector<std::pair<int32_t, double>>> step_top;  ///< [32][5] (id, logit)
    std::vector<float> full_logits;  ///< [n_vocab] first-step logits (prompt `plain` only)

    /// Golden top1 - top2 logit at step i.
    double margin(size_t i) const { return step_top[i][0].second - step_top[i][1].second; }
};

inline std::string golden2_dir(const std::string& model) {
    return data_dir() + "/golden2/" + model;
}
inline std::string golden2_model(const std::string& model) {
    return golden2_dir(model) + "/" + model + "-f16.gguf";
}

/// The records of `<model>/goldens/<variant>.dequantf32.kvf32.json`. The
/// all-vocabulary logits of prompt `plain` are copied (and read) for the
/// f16 variant only; other variants leave full_logits empty.
inline std::vector<Golden2Prompt> read_golden2(const std::string& model,
                                               const std::string& variant = "f16") {
    const std::string base = golden2_dir(model) + "/goldens/" + variant + ".dequantf32.kvf32";
    const QJsonObject root = read_json(base + ".json");
    auto pairs = [](const QJsonValue& v) {
        std::vector<std::pair<int32_t, double>> out;
        for (const QJsonValue& p : v.toArray())
            out.emplace_back(p.toArray()[0].toInt(), p.toArray()[1].toDouble());
        return out;
    };
    std::vector<Golden2Prompt> out;
    for (const QJsonValue& rv : root["results"].toArray()) {
        const QJsonObject r = rv.toObject();
        Golden2Prompt g;
        g.name = r["name"].toString().toStdString();
        g.prompt_ids = ids(r["prompt_ids"]);
        g.first_step_top = pairs(r["first_step_top"]);
        g.generated = ids(r["generated_ids"]);
        for (const QJsonValue& s : r["step_top"].toArray()) g.step_top.push_back(pairs(s));
        if (variant == "f16" && r.contains("full_logits_file")) {
            QFile f(QString::fromStdString(base + ".plain.logits.f32"));
            if (!f.open(QIODevice::ReadOnly))
                qFatal("cannot open %s.plain.logits.f32", base.c_str());
            const QByteArray b = f.readAll();
            g.full_logits.resize(static_cast<size_t>(b.size()) / sizeof(float));
            std::memcpy(g.full_logits.data(), b.data(), g.full_logits.size() * sizeof(float));
        }
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace wbtest
