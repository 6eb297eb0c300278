// RefModel against independent references: llama.cpp's golden logits and
// greedy tokens for stories260K (tests/data/golden, see its README for the
// tolerances used here), a float64 forward pass written in this file for
// llama-2-tiny-random (F16 weights), and self-consistency of batching
// (token-by-token vs whole prompt, two sequences in one batch vs alone).

#include <unistd.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/gguf_bytes.h"
#include "common/greedy_golden.h"
#include "common/json_fixtures.h"
#include "exec/ref/ref_model.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "model/model_desc.h"

using namespace wb::model;

namespace {

const std::string kData = wbtest::data_dir();
const std::string kStories = kData + "/models/stories260K.gguf";
const std::string kTiny = kData + "/models/llama-2-tiny-random.gguf";

// llama.cpp's greedy records (tests/common/greedy_golden.h); logits and
// margins are compared in float below, as this test always has.
using GoldenRecord = wbtest::GreedyGolden;
using wbtest::ids;

std::vector<GoldenRecord> golden_records() {
    return wbtest::read_greedy_golden();
}

std::unique_ptr<Model> load(const std::string& path, KvType kv, uint32_t n_ctx = 512,
                            uint32_t n_seq = 1, uint32_t block_size = 16) {
    LoadOptions o;
    o.backend = "cpu-ref";
    o.context.n_ctx = n_ctx;
    o.context.n_seq_max = n_seq;
    o.context.kv_type = kv;
    o.context.kv_block_size = block_size;
    return load_model(path, o);
}

/// Feeds `tokens` of sequence `seq` from position `pos0` as one batch and
/// returns the last token's logits [n_vocab].
std::vector<float> prefill(Model& m, const std::vector<int32_t>& tokens, int32_t seq = 0,
                           int32_t pos0 = 0) {
    Batch b;
    for (size_t i = 0; i < tokens.size(); ++i) {
        b.add(tokens[i], pos0 + static_cast<int32_t>(i), seq, i + 1 == tokens.size());
    }
    std::vector<float> logits;
    m.decode(b, logits);
    return logits;
}

/// Arg-max with ties to the lower id (written here, not the Sampler's).
int32_t argmax(const std::vector<float>& v) {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) {
        if (v[i] > v[best]) best = i;
    }
    return static_cast<int32_t>(best);
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    float d = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

/// Greedy 48 tokens after the prompt; compares with the golden ids, where a
/// divergence is accepted only at a step whose golden top1-top2 gap is
/// below `tie_tol` (a numerical tie, see the golden README).
void check_greedy(Model& m, const GoldenRecord& r, float tie_tol) {
    std::vector<float> logits = prefill(m, r.prompt_ids);
    int32_t pos = static_cast<int32_t>(r.prompt_ids.size());
    for (size_t step = 0; step < r.generated.size(); ++step) {
        const int32_t tok = argmax(logits);
        if (tok != r.generated[step]) {
            QVERIFY2(float(r.margin[step]) < tie_tol,
                     qPrintable(QString("prompt %1 step %2: got %3, golden %4 (gap %5)")
                                    .arg(r.id)
                                    .arg(step)
                                    .arg(tok)
                                    .arg(r.generated[step])
                                    .arg(r.margin[step])));
            qInfo("prompt %d: numerical tie at step %zu (gap %g), compared up to it", r.id, step,
                  r.margin[step]);
            return;  // tie: the continuations may differ from here on
        }
        Batch b;
        b.add(tok, pos++, 0, true);
        m.decode(b, logits);
    }
}

// ---- float64 reference forward pass (independent of RefModel) ----------

/// Tensor `name` as doubles, [ne1, ne0] row-major (dequantized by ggml's
/// layout reader, which has its own tests).
std::vector<double> weights_f64(const wb::gguf::File& f, const std::string& name) {
    const wb::gguf::TensorInfo& t = f.tensor(name);
    std::vector<float> row(t.ne[0]);
    std::vector<double> out;
    const size_t rb = wb::ggml::row_bytes(t.type, t.ne[0]);
    for (uint64_t r = 0; r < t.n_rows(); ++r) {
        wb::ggml::dequantize_row(t.type, t.data + r * rb, row.data(), t.ne[0], name);
        out.insert(out.end(), row.begin(), row.end());
    }
    return out;
}

/// y[n_out] = W[n_out, n_in] x
std::vector<double> mul(const std::vector<double>& w, const std::vector<double>& x) {
    const size_t n_in = x.size(), n_out = w.size() / n_in;
    std::vector<double> y(n_out, 0.0);
    for (size_t o = 0; o < n_out; ++o) {
        for (size_t i = 0; i < n_in; ++i) y[o] += w[o * n_in + i] * x[i];
    }
    return y;
}

std::vector<double> rms(const std::vector<double>& x, const std::vector<double>& w, double eps) {
    double ss = 0.0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / double(x.size()) + eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
    return y;
}

/// Logits [n_tokens][n_vocab] of a llama model for `tokens` at positions
/// 0..n-1, recomputing everything from scratch (no cache), in double.
/// Hyperparameters read straight from the GGUF keys.
std::vector<std::vector<double>> reference_forward(const std::string& path,
                                                   const std::vector<int32_t>& tokens) {
    const wb::gguf::File f = wb::gguf::File::open(path);
    const size_t n_embd = size_t(*f.get_int("llama.embedding_length"));
    const size_t n_layer = size_t(*f.get_int("llama.block_count"));
    const size_t n_head = size_t(*f.get_int("llama.attention.head_count"));
    const size_t n_head_kv =
        size_t(f.get_int("llama.attention.head_count_kv").value_or(long(n_head)));
    const size_t hd = n_embd / n_head;
    const size_t n_rot = size_t(f.get_int("llama.rope.dimension_count").value_or(long(hd)));
    const double eps = *f.get_float("llama.attention.layer_norm_rms_epsilon");
    const double base = f.get_float("llama.rope.freq_base").value_or(10000.0);
    const std::vector<double> emb = weights_f64(f, "token_embd.weight");
    const std::vector<double> out_w =
        f.find_tensor("output.weight") ? weights_f64(f, "output.weight") : emb;
    const size_t n = tokens.size();

    std::vector<std::vector<double>> x(n);  // [n][n_embd]
    for (size_t t = 0; t < n; ++t) {
        x[t].assign(emb.begin() + long(tokens[t] * n_embd),
                    emb.begin() + long((tokens[t] + 1) * n_embd));
    }
    auto rope = [&](std::vector<double>& v, size_t heads, size_t pos) {
        for (size_t h = 0; h < heads; ++h) {
            for (size_t i = 0; i < n_rot / 2; ++i) {
                const double th = double(pos) * std::pow(base, -2.0 * double(i) / double(n_rot));
                double& a = v[h * hd + 2 * i];
                double& b = v[h * hd + 2 * i + 1];
                const double a0 = a, b0 = b;
                a = a0 * std::cos(th) - b0 * std::sin(th);
                b = a0 * std::sin(th) + b0 * std::cos(th);
            }
        }
    };
    for (size_t l = 0; l < n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        const auto an = weights_f64(f, p + "attn_norm.weight");
        const auto wq = weights_f64(f, p + "attn_q.weight"),
                   wk = weights_f64(f, p + "attn_k.weight");
        const auto wv = weights_f64(f, p + "attn_v.weight"),
                   wo = weights_f64(f, p + "attn_output.weight");
        const auto fn = weights_f64(f, p + "ffn_norm.weight");
        const auto wg = weights_f64(f, p + "ffn_gate.weight"),
                   wu = weights_f64(f, p + "ffn_up.weight");
        const auto wd = weights_f64(f, p + "ffn_down.weight");
        std::vector<std::vector<double>> q(n), k(n), v(n);
        for (size_t t = 0; t < n; ++t) {
            const auto xn = rms(x[t], an, eps);
            q[t] = mul(wq, xn);
            k[t] = mul(wk, xn);
            v[t] = mul(wv, xn);
            rope(q[t], n_head, t);
            rope(k[t], n_head_kv, t);
        }
        for (size_t t = 0; t < n; ++t) {
            std::vector<double> o(n_embd, 0.0);
            for (size_t h = 0; h < n_head; ++h) {
                const size_t kh = h / (n_head / n_head_kv);
                std::vector<double> s(t + 1);
                double mx = -INFINITY;
                for (size_t j = 0; j <= t; ++j) {
                    double d = 0.0;
                    for (size_t e = 0; e < hd; ++e) d += q[t][h * hd + e] * k[j][kh * hd + e];
                    s[j] = d / std::sqrt(double(hd));
                    mx = std::max(mx, s[j]);
                }
                double z = 0.0;
                for (double& sj : s) z += (sj = std::exp(sj - mx));
                for (size_t j = 0; j <= t; ++j) {
                    for (size_t e = 0; e < hd; ++e) o[h * hd + e] += s[j] / z * v[j][kh * hd + e];
                }
            }
            const auto ao = mul(wo, o);
            for (size_t i = 0; i < n_embd; ++i) x[t][i] += ao[i];
            const auto xn = rms(x[t], fn, eps);
            auto g = mul(wg, xn);
            const auto u = mul(wu, xn);
            for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
            const auto dn = mul(wd, g);
            for (size_t i = 0; i < n_embd; ++i) x[t][i] += dn[i];
        }
    }
    std::vector<std::vector<double>> logits(n);
    const auto on = weights_f64(f, "output_norm.weight");
    for (size_t t = 0; t < n; ++t) logits[t] = mul(out_w, rms(x[t], on, eps));
    return logits;
}

// ---- a tiny hand-made llama GGUF (tests/common/gguf_bytes.h) -------------

/// One tensor of the tiny model: ggml shape and type (F32 = 0, MXFP4 = 39).
struct TinyTensor {
    std::string name;
    uint64_t ne0, ne1;
    uint32_t type = 0;
};

/// Writes a 1-layer llama (n_embd 32, 2 heads of 16, 1 kv head, n_ff 32,
/// 4 tokens, tied embeddings: no output.weight) with pseudo-random F32
/// weights; `tweak` replaces the tensor of the same name.
void write_tiny_llama(const std::string& path, const std::vector<TinyTensor>& tweak = {}) {
    std::vector<TinyTensor> ts = {
        {"token_embd.weight", 32, 4},         {"output_norm.weight", 32, 1},
        {"blk.0.attn_norm.weight", 32, 1},    {"blk.0.attn_q.weight", 32, 32},
        {"blk.0.attn_k.weight", 32, 16},      {"blk.0.attn_v.weight", 32, 16},
        {"blk.0.attn_output.weight", 32, 32}, {"blk.0.ffn_norm.weight", 32, 1},
        {"blk.0.ffn_gate.weight", 32, 32},    {"blk.0.ffn_up.weight", 32, 32},
        {"blk.0.ffn_down.weight", 32, 32},
    };
    for (const TinyTensor& t : tweak) {
        for (TinyTensor& u : ts) {
            if (u.name == t.name) u = t;
        }
    }
    auto nbytes = [](const TinyTensor& t) {
        return t.type == 39 ? t.ne0 / 32 * 17 * t.ne1
                            : t.ne0 * t.ne1 * 4;  // mxfp4: 17 B / 32 values
    };
    wbtest::GgufBytes b;
    b.header(3, ts.size(), 9);
    b.kv_str("general.architecture", "llama");
    b.kv_u32("llama.context_length", 64);
    b.kv_u32("llama.embedding_length", 32);
    b.kv_u32("llama.block_count", 1);
    b.kv_u32("llama.feed_forward_length", 32);
    b.kv_u32("llama.attention.head_count", 2);
    b.kv_u32("llama.attention.head_count_kv", 1);
    b.str("llama.attention.layer_norm_rms_epsilon").u32(6).f32(1e-5f);
    b.kv_str("tokenizer.ggml.model", "llama");
    uint64_t off = 0;
    for (const TinyTensor& t : ts) {
        if (t.ne1 == 1) {
            b.tensor(t.name, {t.ne0}, t.type, off);
        } else {
            b.tensor(t.name, {t.ne0, t.ne1}, t.type, off);
        }
        off += (nbytes(t) + 31) / 32 * 32;
    }
    b.pad_to(32);
    uint32_t lcg = 12345;
    for (const TinyTensor& t : ts) {
        const bool norm = t.name.find("norm") != std::string::npos;
        const size_t start = b.buf.size();
        if (t.type == 0) {
            for (uint64_t i = 0; i < t.ne0 * t.ne1; ++i) {
                lcg = lcg * 1664525u + 1013904223u;
                const float r = float(lcg >> 8) / float(1u << 24) - 0.5f;  // [-0.5, 0.5)
                b.f32(norm ? 1.0f + r : r);
            }
        } else {
            b.buf.append(nbytes(t), '\0');
        }
        while (b.buf.size() - start < (nbytes(t) + 31) / 32 * 32) b.buf.push_back('\0');
    }
    b.write(path);
}

}  // namespace

class TestRefModel : public QObject {
    Q_OBJECT
  private slots:
    void loads_stories260k() {
        auto m = load(kStories, KvType::F32);
        QCOMPARE(m->backend_name(), std::string("cpu-ref"));
        const HParams& hp = m->hparams();
        QCOMPARE(hp.n_vocab, 512u);
        QCOMPARE(hp.n_embd, 64u);
        QCOMPARE(hp.n_layer, 5u);
        QCOMPARE(hp.n_head, 8u);
        QCOMPARE(hp.n_head_kv, 4u);
        QCOMPARE(hp.head_dim, 8u);
        QCOMPARE(hp.n_ff, 172u);
        QCOMPARE(hp.n_rot, 8u);
        QCOMPARE(hp.rope_freq_base, 10000.0f);
        QVERIFY(!hp.tied_embeddings);
        QCOMPARE(m->n_free_cells(), 512u);
    }

    void first_step_top10_f32_cache() {
        auto m = load(kStories, KvType::F32, 512, 1);
        for (const GoldenRecord& r : golden_records()) {
            m->seq_rm(0);
            const std::vector<float> logits = prefill(*m, r.prompt_ids);
            QCOMPARE(logits.size(), size_t{512});
            for (const auto& [id, want] : r.top10_f32_kv) {
                QVERIFY2(std::fabs(logits[size_t(id)] - float(want)) <= 1e-3f,
                         qPrintable(QString("prompt %1 token %2: %3 vs golden %4")
                                        .arg(r.id)
                                        .arg(id)
                                        .arg(double(logits[size_t(id)]))
                                        .arg(double(want))));
            }
            QCOMPARE(argmax(logits), r.top10_f32_kv[0].first);
        }
    }

    void first_step_top10_f16_cache() {
        auto m = load(kStories, KvType::F16);
        for (const GoldenRecord& r : golden_records()) {
            m->seq_rm(0);
            const std::vector<float> logits = prefill(*m, r.prompt_ids);
            for (const auto& [id, want] : r.top10) {
                QVERIFY2(std::fabs(logits[size_t(id)] - float(want)) <= 2e-2f,
                         qPrintable(QString("prompt %1 token %2: %3 vs golden %4")
                                        .arg(r.id)
                                        .arg(id)
                                        .arg(double(logits[size_t(id)]))
                                        .arg(double(want))));
            }
        }
    }

    void full_first_logits() {
        for (int which : {0, 5}) {
            const QJsonObject o = wbtest::read_json(kData + "/golden/stories260K_first_logits_" +
                                                    std::to_string(which) + ".json");
            const QJsonArray want = o["logits_f32_kv"].toArray();
            QCOMPARE(want.size(), 512);
            auto m = load(kStories, KvType::F32);
            const std::vector<float> got = prefill(*m, ids(o["prompt_token_ids"]));
            float worst = 0.0f;
            for (int i = 0; i < 512; ++i) {
                worst = std::max(worst, std::fabs(got[size_t(i)] - float(want[i].toDouble())));
            }
            qInfo("prompt %d: max |logit - llama.cpp f32-kv| = %g", which, double(worst));
            QVERIFY(worst <= 1e-3f);
        }
    }

    void greedy_48_tokens_match_llama_cpp() {
        for (KvType kv : {KvType::F32, KvType::F16}) {
            auto m = load(kStories, kv);
            for (const GoldenRecord& r : golden_records()) {
                m->seq_rm(0);
                check_greedy(*m, r, kv == KvType::F32 ? 2e-3f : 2e-2f);
            }
        }
    }

    void token_by_token_equals_batch_prefill() {
        const GoldenRecord r = golden_records()[1];
        auto whole = load(kStories, KvType::F32);
        const std::vector<float> batch_logits = prefill(*whole, r.prompt_ids);
        auto step = load(kStories, KvType::F32);
        std::vector<float> logits;
        for (size_t i = 0; i < r.prompt_ids.size(); ++i) {
            Batch b;
            b.add(r.prompt_ids[i], int32_t(i), 0, true);
            step->decode(b, logits);
        }
        QVERIFY(max_abs_diff(batch_logits, logits) <= 1e-5f);
        QCOMPARE(whole->n_free_cells(), step->n_free_cells());
    }

    void two_sequences_in_one_batch_equal_each_alone() {
        const auto recs = golden_records();
        const std::vector<int32_t>& a = recs[0].prompt_ids;  // 5 tokens
        const std::vector<int32_t>& c = recs[2].prompt_ids;  // 28 tokens
        // Alone: seq A fully, seq C fully.
        auto m1 = load(kStories, KvType::F32);
        const std::vector<float> alone_a = prefill(*m1, a);
        auto m2 = load(kStories, KvType::F32);
        const std::vector<float> alone_c = prefill(*m2, c);

        // Together: first C's first 10 tokens in seq 1, then one batch with
        // all of A (seq 0, pos 0..4) interleaved with the rest of C (seq 1,
        // pos 10..27): different prompts at different positions.
        auto m = load(kStories, KvType::F32, 512, 2);
        (void)prefill(*m, std::vector<int32_t>(c.begin(), c.begin() + 10), 1, 0);
        Batch b;
        size_t ia = 0, ic = 10;
        while (ia < a.size() || ic < c.size()) {
            if (ia < a.size()) {
                b.add(a[ia], int32_t(ia), 0, ia + 1 == a.size());
                ++ia;
            }
            if (ic < c.size()) {
                b.add(c[ic], int32_t(ic), 1, ic + 1 == c.size());
                ++ic;
            }
        }
        std::vector<float> logits;
        m->decode(b, logits);
        QCOMPARE(logits.size(), size_t{2 * 512});
        const std::vector<float> got_a(logits.begin(), logits.begin() + 512);
        const std::vector<float> got_c(logits.begin() + 512, logits.end());
        QVERIFY(max_abs_diff(got_a, alone_a) <= 1e-5f);
        QVERIFY(max_abs_diff(got_c, alone_c) <= 1e-5f);

        // seq_rm(0) then reuse seq 0 from pos 0: same as alone again, while
        // seq 1 is still cached.
        m->seq_rm(0);
        QCOMPARE(m->n_free_cells(), 512u - 32u);  // C's 28 tokens hold 2 blocks of 16 cells
        QVERIFY(max_abs_diff(prefill(*m, a, 0, 0), alone_a) <= 1e-5f);
    }

    void decode_error_leaves_cache_unchanged() {
        const std::vector<int32_t> p = golden_records()[0].prompt_ids;
        auto m = load(kStories, KvType::F32, 8, 1, 1);  // blocks of one cell
        (void)prefill(*m, p);                           // 5 of 8 cells used
        const uint32_t free_before = m->n_free_cells();
        std::vector<float> logits;
        Batch bad;
        bad.add(600, 5, 0, true);  // token outside the 512-token vocabulary
        QVERIFY_THROWS_EXCEPTION(DecodeError, m->decode(bad, logits));
        bad.clear();
        bad.add(1, 7, 0, true);  // not the next position
        QVERIFY_THROWS_EXCEPTION(DecodeError, m->decode(bad, logits));
        bad.clear();
        for (int i = 0; i < 4; ++i) bad.add(1, 5 + i, 0, i == 3);  // 4 tokens, 3 cells free
        QVERIFY_THROWS_EXCEPTION(DecodeError, m->decode(bad, logits));
        QCOMPARE(m->n_free_cells(), free_before);

        // The next valid step gives what an untouched model gives.
        Batch next;
        next.add(432, 5, 0, true);
        m->decode(next, logits);
        auto fresh = load(kStories, KvType::F32, 8, 1, 1);
        (void)prefill(*fresh, p);
        std::vector<float> want;
        fresh->decode(next, want);
        QCOMPARE(logits, want);
    }

    void tiny_random_f16_matches_float64_reference() {
        const std::vector<int32_t> tokens = {1, 15043, 29892, 3186, 31999, 0, 450};
        const auto ref = reference_forward(kTiny, tokens);
        auto m = load(kTiny, KvType::F32, 64);
        QCOMPARE(m->hparams().n_vocab, 32000u);
        Batch b;
        for (size_t i = 0; i < tokens.size(); ++i) b.add(tokens[i], int32_t(i), 0, true);
        std::vector<float> logits;
        m->decode(b, logits);
        QCOMPARE(logits.size(), tokens.size() * 32000);
        double worst = 0.0, scale = 0.0;
        for (size_t t = 0; t < tokens.size(); ++t) {
            for (size_t v = 0; v < 32000; ++v) {
                worst = std::max(worst, std::fabs(double(logits[t * 32000 + v]) - ref[t][v]));
                scale = std::max(scale, std::fabs(ref[t][v]));
            }
        }
        qInfo("tiny-random: max |logit - f64 reference| = %g (max |logit| %g)", worst, scale);
        QVERIFY(scale > 0.0);
        QVERIFY(worst <= 1e-4 * std::max(1.0, scale));
    }

    void tied_embeddings_match_float64_reference() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny.gguf").toStdString();
        write_tiny_llama(path);
        auto m = load(path, KvType::F32, 16);
        QVERIFY(m->hparams().tied_embeddings);
        const std::vector<int32_t> tokens = {1, 3, 0, 2, 2};
        const auto ref = reference_forward(path, tokens);
        Batch b;
        for (size_t i = 0; i < tokens.size(); ++i) b.add(tokens[i], int32_t(i), 0, true);
        std::vector<float> logits;
        m->decode(b, logits);
        double worst = 0.0;
        for (size_t t = 0; t < tokens.size(); ++t) {
            for (size_t v = 0; v < 4; ++v) {
                worst = std::max(worst, std::fabs(double(logits[t * 4 + v]) - ref[t][v]));
            }
        }
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
    }

    void misshapen_or_unsupported_tensors_are_named() {
        QTemporaryDir dir;
        const std::string bad_shape = dir.filePath("shape.gguf").toStdString();
        write_tiny_llama(bad_shape, {{"blk.0.attn_k.weight", 32, 32}});
        for (const char* backend : wbtest::built_backends({"cpu", "cpu-ref", "vulkan"})) {
            LoadOptions o;
            o.backend = backend;
            try {
                (void)load_model(bad_shape, o);
                QFAIL("a misshapen tensor should not load");
            } catch (const wb::gguf::Error& e) {
                QVERIFY2(QString(e.what()).contains("blk.0.attn_k.weight"), e.what());
                QVERIFY2(QString(e.what()).contains("expected [32, 16]"), e.what());
            }
        }
        {
            const wb::gguf::File f = wb::gguf::File::open(bad_shape);
            QVERIFY_THROWS_EXCEPTION(wb::gguf::Error, ModelDesc::from_gguf(f));
            const std::string good = dir.filePath("good.gguf").toStdString();
            write_tiny_llama(good);
            const wb::gguf::File g = wb::gguf::File::open(good);
            QCOMPARE(ModelDesc::from_gguf(g).tensors.size(), size_t{11});  // no throw
        }
        const std::string bad_type = dir.filePath("type.gguf").toStdString();
        // A type ggml has but the engine does not compute with (MXFP4, as in
        // gpt-oss files): refused at load naming the tensor, the type and
        // what is supported.
        write_tiny_llama(bad_type, {{"blk.0.ffn_up.weight", 32, 32, 39}});
        LoadOptions o;
        try {
            (void)load_model(bad_type, o);
            QFAIL("an mxfp4 tensor should not load");
        } catch (const wb::ggml::UnsupportedType& e) {
            const QString what = e.what();
            QVERIFY2(what.contains("blk.0.ffn_up.weight"), e.what());
            QVERIFY2(what.contains("MXFP4"), e.what());
            QVERIFY2(what.contains("supported") && what.contains("Q4_K") && what.contains("Q5_0"),
                     e.what());
        }
    }

    // Fuzzing finds: hyperparameters that only make sense with other keys.
    void hostile_hyperparameters_are_refused_by_key() {
        QTemporaryDir dir;
        // One tensor (token_embd [n_embd, 4], f32) and the llama keys, 2
        // heads, RoPE over 2 dimensions.
        auto write = [&](const std::string& name, uint32_t block_count, uint32_t n_embd,
                         uint32_t key_length) {
            wbtest::GgufBytes b;
            b.header(3, 1, 9);
            b.kv_str("general.architecture", "llama");
            b.kv_u32("llama.context_length", 64);
            b.kv_u32("llama.embedding_length", n_embd);
            b.kv_u32("llama.block_count", block_count);
            b.kv_u32("llama.feed_forward_length", 4);
            b.kv_u32("llama.attention.head_count", 2);
            b.kv_u32("llama.attention.key_length", key_length);
            b.kv_u32("llama.rope.dimension_count", 2);
            b.str("llama.attention.layer_norm_rms_epsilon").u32(6).f32(1e-5f);
            b.tensor("token_embd.weight", {n_embd, 4}, 0, 0).pad_to(32);
            b.buf.append(size_t{n_embd} * 4 * 4, '\0');
            const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
            b.write(path);
            return path;
        };
        // block_count 4294967295: the spec list would have 38 billion
        // entries (out of memory before this check existed).
        {
            const wb::gguf::File f = wb::gguf::File::open(write("blocks.gguf", UINT32_MAX, 4, 2));
            try {
                (void)ModelDesc::from_gguf(f);
                QFAIL("a file with 1 tensor and 4294967295 blocks should not pass");
            } catch (const wb::gguf::Error& e) {
                QVERIFY2(QString(e.what()).contains("llama.block_count"), e.what());
                QVERIFY2(QString(e.what()).contains("38654705657 tensors, the file has 1"),
                         e.what());
            }
        }
        // key_length 2147483649 with 2 heads: 2 * 2147483649 wraps to 2 in
        // 32 bits, which "matched" embedding_length 2.
        {
            const wb::gguf::File f =
                wb::gguf::File::open(write("head_dim.gguf", 1, 2, 2147483649u));
            try {
                (void)HParams::from_gguf(f);
                QFAIL("key_length 2147483649 * 2 heads != embedding_length 2 should not pass");
            } catch (const wb::gguf::Error& e) {
                QVERIFY2(QString(e.what()).contains("llama.attention.key_length"), e.what());
            }
        }
    }

    void bad_files_give_clear_errors() {
        LoadOptions o;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, load_model(kData + "/nope.gguf", o));
        // "vulkan" either builds the Vulkan model or says why not; never a
        // silent fall-back to the CPU.
        o.backend = "vulkan";
        try {
            const auto m = load_model(kStories, o);
            QVERIFY(m->backend_name() != "cpu");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("vulkan", Qt::CaseInsensitive), e.what());
        }
        o.backend = "tpu";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, load_model(kStories, o));
        // A vocab-only file (no tensors) names the missing tensor.
        o.backend = "cpu";
        try {
            (void)load_model(kData + "/models/vocab/ggml-vocab-llama-spm.gguf", o);
            QFAIL("a file without weights should not load");
        } catch (const wb::gguf::Error& e) {
            QVERIFY2(QString(e.what()).contains("token_embd.weight"), e.what());
        }
    }

    // tests/data/repro/vocab_short400.gguf: 400 tokenizer tokens, 512
    // embedding rows. generate refused it, but batch, bench --concurrency
    // and the app aborted later with std::out_of_range on a sampled id past
    // the token list. Now every load refuses it, on every backend, by key.
    void vocabulary_shorter_than_embedding_is_refused_at_load() {
        const std::string path = kData + "/repro/vocab_short400.gguf";
        for (const char* backend : wbtest::built_backends({"cpu", "vulkan"})) {
            LoadOptions o;
            o.backend = backend;
            try {
                (void)load_model(path, o);
                QFAIL("loaded");
            } catch (const wb::gguf::Error& e) {
                QVERIFY2(QString(e.what()).contains("tokenizer.ggml.tokens") &&
                             QString(e.what()).contains("400 tokens") &&
                             QString(e.what()).contains("512 rows"),
                         e.what());
            }
        }
        const wb::gguf::File f = wb::gguf::File::open(path);
        QVERIFY_THROWS_EXCEPTION(wb::gguf::Error, HParams::from_gguf(f));
    }

    // The model file is truncated by another program while its weights are
    // read: the load used to die with SIGBUS; now it is a gguf::Error that
    // names the file, on both backends.
    void file_truncated_while_loading_is_an_error() {
        QTemporaryDir dir;
        for (const char* backend : wbtest::built_backends({"cpu-ref", "vulkan"})) {
            const std::string path =
                dir.filePath(QString("cut-%1.gguf").arg(backend)).toStdString();
            QVERIFY(QFile::copy(QString::fromStdString(kStories), QString::fromStdString(path)));
            const wb::gguf::File f = wb::gguf::File::open(path);
            QCOMPARE(::truncate(path.c_str(), static_cast<off_t>(f.data_offset() + 8192)), 0);
            LoadOptions o;
            o.backend = backend;
            o.context.n_ctx = 64;
            try {
                (void)load_model_from(f, o);
                QFAIL("a truncated file loaded");
            } catch (const wb::gguf::Error& e) {
                QVERIFY2(QString(e.what()).contains("shrank while it was being read") &&
                             QString(e.what()).startsWith(QString::fromStdString(path)),
                         e.what());
            } catch (const std::runtime_error& e) {
                // No Vulkan device here: the Vulkan load stops before reading.
                QVERIFY2(std::string(backend) == "vulkan" &&
                             QString(e.what()).contains("vulkan", Qt::CaseInsensitive),
                         e.what());
            }
        }
    }

    // The threaded executor keeps the mapping and reads the weights in
    // place: a truncation after the load is reported by the next decode
    // (naming the file), never a SIGBUS and never logits from zero pages.
    void file_truncated_after_loading_fails_the_next_decode() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("cut-after.gguf").toStdString();
        QVERIFY(QFile::copy(QString::fromStdString(kStories), QString::fromStdString(path)));
        LoadOptions o;
        o.backend = "cpu";
        o.context.n_ctx = 64;
        std::unique_ptr<Model> m = load_model(path, o);
        uint64_t data_offset = 0;
        {
            const wb::gguf::File f = wb::gguf::File::open(path);
            data_offset = f.data_offset();
        }
        QCOMPARE(::truncate(path.c_str(), static_cast<off_t>(data_offset + 8192)), 0);
        Batch b;
        b.add(1, 0, 0, true);
        std::vector<float> logits;
        try {
            m->decode(b, logits);
            QFAIL("a decode over a truncated file gave logits");
        } catch (const wb::gguf::Error& e) {
            QVERIFY2(QString(e.what()).contains("shrank while it was being read") &&
                         QString(e.what()).startsWith(QString::fromStdString(path)),
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestRefModel)
#include "test_ref_model.moc"
