// model::prefill splits a whole prompt into ubatches of at most n_ubatch
// tokens, one Model::decode each (a 4000-token prompt fed as one
// decode was one GPU submission of minutes on lavapipe, past any GPU
// watchdog). Checked on a model that records each decode's batch, against
// hand-worked splits: positions continue across ubatches, only the last
// token asks for logits, errors and the empty prompt.

#include <QtTest>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kv/batch.h"
#include "kv/kv_cells.h"
#include "model/model.h"
#include "model/prefill.h"

using namespace wb::model;

namespace {

/// A Model that computes nothing: it keeps a copy of every batch decode()
/// is given and returns one logit row (n_vocab 4) per token that asks.
class RecordingModel : public Model {
  public:
    RecordingModel() : cells_(4096, 1, 4) { hp_.n_vocab = 4; }
    const HParams& hparams() const override { return hp_; }
    const ContextParams& context() const override { return ctx_; }
    std::string backend_name() const override { return "recording"; }
    void decode(const Batch& batch, std::vector<float>& logits) override {
        batches.push_back(batch);
        size_t n_out = 0;
        for (uint8_t o : batch.output) n_out += o;
        logits.assign(n_out * hp_.n_vocab, static_cast<float>(batches.size()));
    }
    void seq_rm(int32_t) override {}
    uint32_t n_free_cells() const override { return 4096; }
    MemoryReport memory_report() const override { return {}; }
    DeviceFacts device_facts() const override { return {}; }
    KvCells& kv_cells() override { return cells_; }
    const KvCells& kv_cells() const override { return cells_; }

    std::vector<Batch> batches;

  private:
    HParams hp_;
    ContextParams ctx_;
    KvCells cells_;
};

std::vector<int32_t> prompt(size_t n) {
    std::vector<int32_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(100 + i);
    return ids;
}

}  // namespace

class TestPrefill : public QObject {
    Q_OBJECT
  private slots:
    // 1100 tokens at n_ubatch 512 from position 7: decodes of 512, 512
    // and 76 tokens; positions 7..1106 in order; token i at position 7 + i
    // of sequence 3; logits asked for the last token only.
    void splits_into_ubatches() {
        RecordingModel m;
        const std::vector<int32_t> ids = prompt(1100);
        std::vector<float> logits;
        prefill(m, ids, 3, 7, 512, logits);
        QCOMPARE(m.batches.size(), size_t{3});
        const size_t sizes[] = {512, 512, 76};
        size_t i = 0;
        for (size_t b = 0; b < 3; ++b) {
            const Batch& batch = m.batches[b];
            QCOMPARE(batch.token.size(), sizes[b]);
            for (size_t k = 0; k < batch.token.size(); ++k, ++i) {
                QCOMPARE(batch.token[k], static_cast<int32_t>(100 + i));
                QCOMPARE(batch.pos[k], static_cast<int32_t>(7 + i));
                QCOMPARE(batch.seq_id[k], 3);
                QCOMPARE(int(batch.output[k]), i == 1099 ? 1 : 0);
            }
        }
        // The logits are the last decode's: one row.
        QCOMPARE(logits.size(), size_t{4});
        QCOMPARE(logits[0], 3.0f);
    }

    // The default ubatch is llama.cpp's 512; a prompt that fits is one decode.
    void short_prompt_is_one_decode() {
        QCOMPARE(kDefaultUbatch, 512u);
        RecordingModel m;
        std::vector<float> logits;
        prefill(m, prompt(512), 0, 0, kDefaultUbatch, logits);
        QCOMPARE(m.batches.size(), size_t{1});
        QCOMPARE(m.batches[0].token.size(), size_t{512});
    }

    // No tokens: no decode, logits untouched; n_ubatch 0 is refused.
    void empty_prompt_and_zero_ubatch() {
        RecordingModel m;
        std::vector<float> logits = {42.0f};
        prefill(m, {}, 0, 0, 512, logits);
        QVERIFY(m.batches.empty());
        QCOMPARE(logits, std::vector<float>{42.0f});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, prefill(m, prompt(3), 0, 0, 0, logits));
        QVERIFY(m.batches.empty());
    }
};

QTEST_MAIN(TestPrefill)
#include "test_prefill.moc"
