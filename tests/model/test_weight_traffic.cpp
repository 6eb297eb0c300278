// decode_weight_bytes (model/weight_traffic.h), the weight bytes one decode
// step reads per token, on real model files against sums worked by hand
// from the tensor shapes (`workbench-cli info` lists them):
//  - stories260K (F32, untied output): n_embd 64, n_ff 172, 5 layers, GQA
//    (K and V 32 rows). A layer: Q 64x64x4 = 16384, K and V 64x32x4 = 8192
//    each, O 16384, gate, up and down 64x172x4 = 44032 each, two norms
//    of 256: 181760; x 5 = 908800. Plus output 64x512x4 = 131072, the
//    output norm 256 and one token-embedding row 64x4 = 256: 1040384 (the
//    file's 1171200 bytes less the 511 other embedding rows).
//  - tiny gemma2 (F16 matrices, F32 norms, output tied to the embedding):
//    the table is read whole as the output, 256x2050x2 = 1049600; the
//    output norm 1024; a layer: Q 256x256x2 = 131072, K and V 256x128x2 =
//    65536 each, O 131072, gate, up, down 256x768x2 = 393216 each, four
//    norms of 1024: 1576960; x 2 = 3153920. Total 4204544: every byte of
//    the weights, the embedding not counted twice.

#include <QtTest>

#include "common/data_dir.h"
#include "gguf/gguf.h"
#include "model/model_desc.h"
#include "model/weight_traffic.h"

using namespace wb;

namespace {

uint64_t decode_bytes(const std::string& rel) {
    const gguf::File f = gguf::File::open(wbtest::data_dir() + "/" + rel);
    return model::decode_weight_bytes(model::ModelDesc::from_gguf(f));
}

}  // namespace

class TestWeightTraffic : public QObject {
    Q_OBJECT
  private slots:
    void untied_output_reads_one_embedding_row() {
        QCOMPARE(decode_bytes("models/stories260K.gguf"), uint64_t{1040384});
    }

    void tied_output_reads_the_table_once() {
        QCOMPARE(decode_bytes("golden2/gemma2/gemma2-f16.gguf"), uint64_t{4204544});
    }
};

QTEST_GUILESS_MAIN(TestWeightTraffic)
#include "test_weight_traffic.moc"
