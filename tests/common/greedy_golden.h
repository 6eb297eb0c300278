#pragma once
// llama.cpp's greedy reference generations for stories260K
// (tests/data/golden/stories260K_greedy.jsonl; fields in golden/README.md,
// "Record fields"), parsed once into plain C++ for the model, Vulkan and
// scheduler tests. Values are kept as the JSON gives them (logits as
// double); a test that compares in float casts at the comparison.

#include <QJsonArray>
#include <QJsonObject>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/json_fixtures.h"
#include "common/data_dir.h"

namespace wbtest {

/// One prompt of the golden greedy run (48 tokens, EOS not stopping it).
struct GreedyGolden {
    int id = 0;                                     ///< "id": 0..5
    std::string prompt;                             ///< "prompt", UTF-8 text
    std::vector<int32_t> prompt_ids;                ///< "prompt_token_ids" [n_prompt], BOS first
    std::vector<int32_t> generated;                 ///< "generated_token_ids" [48]
    std::string text;                               ///< "generated_text", UTF-8
    std::vector<std::pair<int32_t, double>> top10;  ///< [10] (id, logit), F16 KV cache
    std::vector<std::pair<int32_t, double>> top10_f32_kv;  ///< [10] (id, logit), F32 KV cache
    std::vector<double> margin;  ///< [48] top1 - top2 logit per step ("step_top2", F16 KV run)
};

/// `[[token_id, logit], ...]` as (id, logit) pairs.
inline std::vector<std::pair<int32_t, double>> id_logit_pairs(const QJsonValue& v) {
    std::vector<std::pair<int32_t, double>> out;
    for (const QJsonValue& p : v.toArray()) {
        const QJsonArray a = p.toArray();
        out.emplace_back(a[0].toInt(), a[1].toDouble());
    }
    return out;
}

/// Every record of `path` (default: the shared stories260K_greedy.jsonl),
/// in file order. A missing file is fatal (read_jsonl).
inline std::vector<GreedyGolden> read_greedy_golden(
    const std::string& path = data_dir() + "/golden/stories260K_greedy.jsonl") {
    std::vector<GreedyGolden> out;
    for (const QJsonObject& o : read_jsonl(path)) {
        GreedyGolden g;
        g.id = o["id"].toInt();
        g.prompt = o["prompt"].toString().toStdString();
        g.prompt_ids = ids(o["prompt_token_ids"]);
        g.generated = ids(o["generated_token_ids"]);
        g.text = o["generated_text"].toString().toStdString();
        g.top10 = id_logit_pairs(o["top10"]);
        g.top10_f32_kv = id_logit_pairs(o["top10_f32_kv"]);
        // step_top2 entries: [top1_id, top1_logit, top2_id, top2_logit].
        for (const QJsonValue& s : o["step_top2"].toArray()) {
            const QJsonArray a = s.toArray();
            g.margin.push_back(a[1].toDouble() - a[3].toDouble());
        }
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace wbtest
