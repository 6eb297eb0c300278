// Architecture specs and the memory planner without a device:
//  - an architecture or option the engine does not run is refused at load
//    naming the key and its value and listing the supported architectures;
//  - a tensor an architecture does not have is an error naming it;
//  - each tiny golden2 model gets the hyperparameters its GGUF keys say
//    (sliding-window layers, soft-caps, RoPE sets, query scale);
//  - the planner's figures for named shapes against hand-worked numbers
//    (a 70B model in F16 needs about 141 GB for its weights; Q8_0 and
//    Q4_K_M cut that 1.9x and 3-4x), and the largest context is the last
//    one whose plan fits.

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "common/gguf_bytes.h"
#include "common/golden2.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "model/arch/arch.h"
#include "model/memory_plan.h"
#include "model/model_desc.h"

using namespace wb::model;

namespace {

/// A one-layer llama-like file of architecture `arch` with extra keys and
/// extra tensors (F32, zeros). Tensors: the llama set at n_embd 32.
std::string write_model(const QTemporaryDir& dir, const std::string& name, const std::string& arch,
                        const std::vector<std::pair<std::string, uint32_t>>& extra_u32 = {},
                        const std::vector<std::pair<std::string, std::string>>& extra_str = {},
                        const std::vector<std::string>& extra_tensors = {}) {
    struct T {
        std::string name;
        uint64_t ne0, ne1;
    };
    std::vector<T> ts = {
        {"token_embd.weight", 32, 4},         {"output_norm.weight", 32, 1},
        {"blk.0.attn_norm.weight", 32, 1},    {"blk.0.attn_q.weight", 32, 32},
        {"blk.0.attn_k.weight", 32, 16},      {"blk.0.attn_v.weight", 32, 16},
        {"blk.0.attn_output.weight", 32, 32}, {"blk.0.ffn_norm.weight", 32, 1},
        {"blk.0.ffn_gate.weight", 32, 32},    {"blk.0.ffn_up.weight", 32, 32},
        {"blk.0.ffn_down.weight", 32, 32},
    };
    for (const std::string& e : extra_tensors) ts.push_back({e, 32, 1});
    wbtest::GgufBytes b;
    b.header(3, ts.size(), 8 + extra_u32.size() + extra_str.size());
    b.kv_str("general.architecture", arch);
    b.kv_u32(arch + ".context_length", 64);
    b.kv_u32(arch + ".embedding_length", 32);
    b.kv_u32(arch + ".block_count", 1);
    b.kv_u32(arch + ".feed_forward_length", 32);
    b.kv_u32(arch + ".attention.head_count", 2);
    b.kv_u32(arch + ".attention.head_count_kv", 1);
    b.str(arch + ".attention.layer_norm_rms_epsilon").u32(6).f32(1e-5f);
    for (const auto& [k, v] : extra_u32) b.kv_u32(k, v);
    for (const auto& [k, v] : extra_str) b.kv_str(k, v);
    uint64_t off = 0;
    for (const T& t : ts) {
        if (t.ne1 == 1) {
            b.tensor(t.name, {t.ne0}, 0, off);
        } else {
            b.tensor(t.name, {t.ne0, t.ne1}, 0, off);
        }
        off += (t.ne0 * t.ne1 * 4 + 31) / 32 * 32;
    }
    b.pad_to(32);
    b.buf.append(off, '\0');
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    b.write(path);
    return path;
}

/// what() of loading `path` on the CPU, or "" when it loads.
std::string load_error(const std::string& path) {
    try {
        LoadOptions o;
        (void)load_model(path, o);
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace

class TestArchSpec : public QObject {
    Q_OBJECT

  private slots:
    void unsupported_architecture_is_refused_with_the_list() {
        QTemporaryDir dir;
        const std::string e = load_error(write_model(dir, "gpt2.gguf", "gpt2"));
        QVERIFY2(QString::fromStdString(e).contains(
                     "unsupported architecture 'gpt2' (general.architecture); supported: gemma2, "
                     "gemma3, llama, phi3, qwen2, qwen3"),
                 e.c_str());
        try {
            const wb::gguf::File f = wb::gguf::File::open(dir.filePath("gpt2.gguf").toStdString());
            (void)HParams::from_gguf(f);
            QFAIL("gpt2 should be refused");
        } catch (const UnsupportedModel&) {
        }
    }

    void unsupported_options_are_refused_by_key_and_value() {
        QTemporaryDir dir;
        struct Case {
            const char* file;
            std::vector<std::pair<std::string, uint32_t>> u32;
            std::vector<std::pair<std::string, std::string>> str;
            const char* expect;
        };
        const Case cases[] = {
            {"moe.gguf",
             {{"llama.expert_count", 8}},
             {},
             "metadata key 'llama.expert_count' = 8: mixture of experts"},
            {"mla.gguf",
             {{"llama.attention.kv_lora_rank", 512}},
             {},
             "'llama.attention.kv_lora_rank' = 512: multi-head latent attention"},
            {"ssm.gguf",
             {{"llama.ssm.conv_kernel", 4}},
             {},
             "'llama.ssm.conv_kernel' = 4: a recurrent"},
            {"yarn.gguf",
             {},
             {{"qwen2.rope.scaling.type", "yarn"}},
             "'qwen2.rope.scaling.type' = "},
        };
        for (const Case& c : cases) {
            const std::string arch = std::string(c.file) == "yarn.gguf" ? "qwen2" : "llama";
            const std::string e = load_error(write_model(dir, c.file, arch, c.u32, c.str));
            QVERIFY2(QString::fromStdString(e).contains(c.expect), e.c_str());
            QVERIFY2(QString::fromStdString(e).contains("supported architectures: gemma2, gemma3"),
                     e.c_str());
        }
        const std::string e = load_error(
            write_model(dir, "yarn2.gguf", "qwen2", {}, {{"qwen2.rope.scaling.type", "yarn"}}));
        QVERIFY2(QString::fromStdString(e).contains("RoPE scaling 'yarn' is not supported"),
                 e.c_str());
    }

    void a_tensor_the_architecture_lacks_is_an_error() {
        QTemporaryDir dir;
        // A llama file with a bias on Q: ignoring it would change the results.
        const std::string e =
            load_error(write_model(dir, "bias.gguf", "llama", {}, {}, {"blk.0.attn_q.bias"}));
        QVERIFY2(QString::fromStdString(e).contains("tensor 'blk.0.attn_q.bias'"), e.c_str());
        QVERIFY2(QString::fromStdString(e).contains("not part of architecture llama"), e.c_str());
        // The same file without it loads; a qwen2 file without its biases does not.
        QVERIFY(load_error(write_model(dir, "plain.gguf", "llama")).empty());
        const std::string q = load_error(write_model(dir, "qwen2.gguf", "qwen2"));
        QVERIFY2(QString::fromStdString(q).contains("blk.0.attn_q.bias"), q.c_str());
    }

    // gemma3's sliding_window written as 0 was refused as "missing" though
    // the key is there; now the message says what is wrong with its value
    // (and an absent key is still "missing").
    void gemma3_zero_sliding_window_says_what_is_wrong() {
        QTemporaryDir dir;
        auto hp_error = [](const std::string& path) -> std::string {
            try {
                const wb::gguf::File f = wb::gguf::File::open(path);
                (void)HParams::from_gguf(f);
                return "";
            } catch (const std::exception& e) {
                return e.what();
            }
        };
        const std::string zero = hp_error(
            write_model(dir, "g3zero.gguf", "gemma3", {{"gemma3.attention.sliding_window", 0}}));
        QVERIFY2(QString::fromStdString(zero).contains(
                     "metadata key 'gemma3.attention.sliding_window': value 0 is not a window"),
                 zero.c_str());
        QVERIFY2(!QString::fromStdString(zero).contains("missing"), zero.c_str());
        const std::string absent = hp_error(write_model(dir, "g3none.gguf", "gemma3"));
        QVERIFY2(QString::fromStdString(absent).contains(
                     "metadata key 'gemma3.attention.sliding_window': missing"),
                 absent.c_str());
        QVERIFY(hp_error(write_model(dir, "g3one.gguf", "gemma3",
                                     {{"gemma3.attention.sliding_window", 1}}))
                    .empty());
    }

    void hyperparameters_follow_the_keys() {
        auto hp = [](const std::string& m) {
            const wb::gguf::File f = wb::gguf::File::open(wbtest::golden2_model(m));
            return ModelDesc::from_gguf(f).hp;
        };
        const HParams g2 = hp("gemma2");
        QCOMPARE(g2.n_swa, 32u);
        QVERIFY(g2.is_swa(0) && !g2.is_swa(1));  // pattern 2: even layers
        QCOMPARE(g2.attn_softcap, 50.0f);
        QCOMPARE(g2.final_softcap, 30.0f);
        QCOMPARE(g2.embd_scale, 16.0f);   // sqrt(256)
        QCOMPARE(g2.attn_scale, 0.125f);  // 1 / sqrt(head_dim 64)
        QVERIFY(g2.ffn_act == FfnActivation::GeluTanh);
        const HParams g3 = hp("gemma3");
        QVERIFY(g3.is_swa(0) && !g3.is_swa(1));
        QCOMPARE(g3.layer_rope(0).freq_base, 10000.0f);  // local: rope.freq_base_swa, unscaled
        QCOMPARE(g3.layer_rope(0).freq_scale, 1.0f);
        QCOMPARE(g3.layer_rope(1).freq_base, 1000000.0f);  // global: linear scaling x8
        QCOMPARE(g3.layer_rope(1).freq_scale, 0.125f);
        QCOMPARE(g3.final_softcap, 0.0f);
        QCOMPARE(g3.attn_scale, float(1.0 / std::sqrt(128.0)));
        const HParams l3 = hp("llama3");
        QCOMPARE(l3.rope_freq_factors.size(), size_t{32});
        QCOMPARE(l3.rope_freq_factors[0], 1.0f);    // high-frequency dims unchanged
        QCOMPARE(l3.rope_freq_factors[31], 32.0f);  // low-frequency dims: the scaling factor
        const HParams q3 = hp("qwen3");
        QCOMPARE(q3.head_dim, 128u);
        QCOMPARE(q3.q_dim(), 512u);
        QVERIFY(q3.rope_mode == RopeMode::NeoX);
        QCOMPARE(hp("phi3").n_swa, 0u);
        // Mistral 7B v0.1 style: a llama file with a sliding window has it on every layer.
        QTemporaryDir dir;
        const wb::gguf::File m = wb::gguf::File::open(
            write_model(dir, "mistral.gguf", "llama", {{"llama.attention.sliding_window", 16}}));
        const HParams mh = ModelDesc::from_gguf(m).hp;
        QCOMPARE(mh.n_swa, 16u);
        QVERIFY(mh.is_swa(0));
        QCOMPARE(hp("llama-spm").n_swa, 0u);
    }
};

QTEST_GUILESS_MAIN(TestArchSpec)
#include "test_arch_spec.moc"
