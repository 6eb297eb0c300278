// GGUF reader tests: real model files (expected facts from the fixtures'
// MANIFEST.md, written by an independent parser) and hand-made broken files
// written here byte by byte from the GGUF spec.

#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/gguf_bytes.h"
#include "gguf/gguf.h"

using wb::gguf::File;
using wb::gguf::ValueType;
using wbtest::GgufBytes;

namespace {

const std::string kData = wbtest::data_dir();

// A small valid GGUF v3 file: one KV of every type (arrays included), two
// tensors (f32 [4, 2] and q8_0 [32]), with the byte offset of each section.
struct Sample {
    GgufBytes bytes;
    size_t end_header = 0, end_kv = 0, end_tensor_infos = 0, data_start = 0;
};

Sample make_sample(uint32_t version = 3) {
    Sample s;
    GgufBytes& b = s.bytes;
    b.header(version, 2, 15);
    s.end_header = b.buf.size();
    b.str("k.u8").u32(0).u8(200);
    b.str("k.i8").u32(1).pod<int8_t>(-5);
    b.str("k.u16").u32(2).pod<uint16_t>(65000);
    b.str("k.i16").u32(3).pod<int16_t>(-30000);
    b.kv_u32("k.u32", 4000000000u);
    b.str("k.i32").u32(5).pod<int32_t>(-2000000000);
    b.str("k.f32").u32(6).f32(1.5f);
    b.str("k.bool").u32(7).u8(1);
    b.kv_str("k.str", "héllo");
    b.str("k.u64").u32(10).u64(1ull << 40);
    b.str("k.i64").u32(11).pod<int64_t>(-(1ll << 40));
    b.str("k.f64").u32(12).pod<double>(0.25);
    b.str("k.arr_str").u32(9).u32(8).u64(3).str("a").str("").str("ccc");
    b.str("k.arr_f32").u32(9).u32(6).u64(2).f32(-1.0f).f32(2.5f);
    // array of arrays: [[1, 2], [3]] as int32
    b.str("k.arr_arr").u32(9).u32(9).u64(2);
    b.u32(5).u64(2).pod<int32_t>(1).pod<int32_t>(2);
    b.u32(5).u64(1).pod<int32_t>(3);
    s.end_kv = b.buf.size();
    b.tensor("w", {4, 2}, 0, 0);
    b.tensor("q", {32}, 8, 32);  // f32 [4,2] = 32 bytes; q8_0 block at 32
    s.end_tensor_infos = b.buf.size();
    b.pad_to(32);
    s.data_start = b.buf.size();
    for (int i = 0; i < 8; ++i) b.f32(static_cast<float>(i) + 0.5f);
    b.pod<uint16_t>(0x3C00);  // d = 1.0
    for (int i = 0; i < 32; ++i) b.pod<int8_t>(static_cast<int8_t>(i - 16));
    return s;
}

class TestGguf : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int counter_ = 0;

    std::string write(const GgufBytes& b) {
        const std::string path = dir_.filePath(QString("f%1.gguf").arg(counter_++)).toStdString();
        b.write(path);
        return path;
    }

    // Parses `b` and returns the error text; fails the test if it parses.
    QString error_of(const GgufBytes& b) {
        try {
            File::open(write(b));
        } catch (const wb::gguf::Error& e) {
            return QString::fromStdString(e.what());
        } catch (const std::exception& e) {
            return "non-gguf exception: " + QString::fromStdString(e.what());
        }
        return "<parsed without error>";
    }

private slots:
    void stories260k_matches_manifest() {
        File f = File::open(kData + "/models/stories260K.gguf");
        QCOMPARE(f.version(), 3u);
        QCOMPARE(f.metadata().size(), size_t(19));
        QCOMPARE(f.tensors().size(), size_t(48));
        QCOMPARE(f.alignment(), 32u);
        QCOMPARE(f.data_offset(), uint64_t(14176));
        QCOMPARE(f.get_string("general.architecture").value(), std::string("llama"));
        QCOMPARE(f.get_int("llama.embedding_length").value(), int64_t(64));
        QCOMPARE(f.get_int("tokenizer.ggml.seperator_token_id").value(), int64_t(4294967295));
        QVERIFY(std::abs(f.get_float("llama.attention.layer_norm_rms_epsilon").value() - 1e-5) < 1e-9);
        const auto* tokens = f.get_array("tokenizer.ggml.tokens", ValueType::String);
        QVERIFY(tokens);
        QCOMPARE(tokens->array_str.size(), size_t(512));
        QCOMPARE(tokens->array_str[1], std::string("<s>"));
        QCOMPARE(tokens->array_str[3], std::string("<0x00>"));
        const auto* scores = f.get_array("tokenizer.ggml.scores", ValueType::Float32);
        QCOMPARE(scores->array_f[260], -1.0);
        const auto& emb = f.tensor("token_embd.weight");
        QCOMPARE(emb.ne[0], uint64_t(64));
        QCOMPARE(emb.ne[1], uint64_t(512));
        QCOMPARE(emb.offset, uint64_t(0));
        QCOMPARE(emb.nbytes, uint64_t(64 * 512 * 4));
        QCOMPARE(f.tensor("output.weight").offset, uint64_t(131328));
        QCOMPARE(f.tensor("blk.0.attn_q.weight").offset, uint64_t(262400));
        QCOMPARE(f.tensor("blk.1.attn_q.weight").offset, uint64_t(262400 + 181760));
        QCOMPARE(f.tensor("blk.0.ffn_down.weight").shape_string(), std::string("[172, 64]"));
        uint64_t params = 0;
        for (const auto& t : f.tensors()) params += t.n_elements();
        QCOMPARE(params, uint64_t(292800));
        // a type mismatch on lookup names the key
        QVERIFY_THROWS_EXCEPTION(wb::gguf::Error, f.get_string("llama.block_count"));
    }

    void tiny_random_f16_model() {
        File f = File::open(kData + "/models/llama-2-tiny-random.gguf");
        QCOMPARE(f.tensors().size(), size_t(12));
        QCOMPARE(f.metadata().size(), size_t(18));
        QCOMPARE(f.data_offset(), uint64_t(724416));
        QCOMPARE(f.tensor("token_embd.weight").type, 1u);
        QCOMPARE(f.tensor("blk.0.attn_norm.weight").type, 0u);
        QCOMPARE(f.tensor("output.weight").ne[1], uint64_t(32000));
    }

    void vocab_only_files_end_before_aligned_data() {
        for (const char* name : {"llama-spm", "phi-3", "gpt-2", "bert-bge", "falcon"}) {
            File f = File::open(kData + "/models/vocab/ggml-vocab-" + name + ".gguf");
            QVERIFY(f.tensors().empty());
            QVERIFY(f.get_array("tokenizer.ggml.tokens", ValueType::String));
        }
    }

    void sample_round_trips_every_value_type() {
        Sample s = make_sample();
        File f = File::open(write(s.bytes));
        QCOMPARE(f.get_int("k.u8").value(), int64_t(200));
        QCOMPARE(f.get_int("k.i8").value(), int64_t(-5));
        QCOMPARE(f.get_int("k.u16").value(), int64_t(65000));
        QCOMPARE(f.get_int("k.i16").value(), int64_t(-30000));
        QCOMPARE(f.get_int("k.u32").value(), int64_t(4000000000));
        QCOMPARE(f.get_int("k.i32").value(), int64_t(-2000000000));
        QCOMPARE(f.get_float("k.f32").value(), 1.5);
        QCOMPARE(f.get_bool("k.bool").value(), true);
        QCOMPARE(f.get_string("k.str").value(), std::string("héllo"));
        QCOMPARE(f.get_int("k.u64").value(), int64_t(1) << 40);
        QCOMPARE(f.get_int("k.i64").value(), -(int64_t(1) << 40));
        QCOMPARE(f.get_float("k.f64").value(), 0.25);
        const auto* as = f.get_array("k.arr_str", ValueType::String);
        QCOMPARE(as->array_str, (std::vector<std::string>{"a", "", "ccc"}));
        QCOMPARE(f.get_array("k.arr_f32", ValueType::Float32)->array_f, (std::vector<double>{-1, 2.5}));
        const auto* aa = f.get_array("k.arr_arr", ValueType::Array);
        QCOMPARE(aa->array_nested.size(), size_t(2));
        QCOMPARE(aa->array_nested[0].array_i, (std::vector<int64_t>{1, 2}));
        QCOMPARE(aa->array_nested[1].array_i, (std::vector<int64_t>{3}));
        QVERIFY_THROWS_EXCEPTION(wb::gguf::Error, f.get_array("k.arr_str", ValueType::Int32));
        QCOMPARE(f.data_offset(), uint64_t(s.data_start));
        const auto& w = f.tensor("w");
        float w0;
        std::memcpy(&w0, w.data, 4);
        QCOMPARE(w0, 0.5f);
        QCOMPARE(f.tensor("q").nbytes, uint64_t(34));
        // v2 has the same layout
        QCOMPARE(File::open(write(make_sample(2).bytes)).version(), 2u);
    }

    void custom_alignment_is_honoured() {
        GgufBytes b;
        b.header(3, 1, 1).kv_u32("general.alignment", 64).tensor("t", {2}, 0, 0);
        const size_t before = b.buf.size();
        b.pad_to(64).f32(1).f32(2);
        File f = File::open(write(b));
        QCOMPARE(f.alignment(), 64u);
        QCOMPARE(f.data_offset() % 64, uint64_t(0));
        QVERIFY(f.data_offset() >= before);

        GgufBytes bad;
        bad.header(3, 0, 1).kv_u32("general.alignment", 48);
        QVERIFY(error_of(bad).contains("power of two"));
    }

    void truncation_at_every_boundary_names_a_field() {
        Sample s = make_sample();
        const size_t data_mid = s.data_start + 40;
        for (size_t cut : {size_t(0), size_t(3), size_t(4), size_t(8), s.end_header - 1,
                           s.end_header, s.end_header + 5, s.end_kv - 1, s.end_kv, s.end_kv + 3,
                           s.end_tensor_infos - 1, s.end_tensor_infos, data_mid,
                           s.bytes.buf.size() - 1}) {
            GgufBytes b;
            b.buf = s.bytes.buf.substr(0, cut);
            const QString err = error_of(b);
            QVERIFY2(err.contains("offset"), qPrintable(QString("cut %1: %2").arg(cut).arg(err)));
            QVERIFY2(!err.startsWith("<parsed") && !err.startsWith("non-gguf"),
                     qPrintable(QString("cut %1: %2").arg(cut).arg(err)));
            QVERIFY2(err.contains("file ends early") || err.contains("past the end") ||
                         err.contains("cannot fit") || err.contains("not a GGUF"),
                     qPrintable(QString("cut %1: %2").arg(cut).arg(err)));
        }
        // Every byte position, too: none may crash or hang, all must error.
        for (size_t cut = 0; cut < s.bytes.buf.size(); ++cut) {
            GgufBytes b;
            b.buf = s.bytes.buf.substr(0, cut);
            const QString err = error_of(b);
            QVERIFY2(!err.startsWith("<parsed") && !err.startsWith("non-gguf"),
                     qPrintable(QString("cut %1: %2").arg(cut).arg(err)));
        }
    }

    void bad_magic() {
        Sample s = make_sample();
        s.bytes.buf[0] = 'X';
        QVERIFY(error_of(s.bytes).contains("not a GGUF file"));
    }

    void versions_1_and_99() {
        QVERIFY(error_of(make_sample(1).bytes).contains("version 1 is not supported"));
        const QString e99 = error_of(make_sample(99).bytes);
        QVERIFY2(e99.contains("unsupported GGUF version 99"), qPrintable(e99));
        QVERIFY(e99.contains("offset 4"));
    }

    void huge_tensor_count() {
        GgufBytes b;
        b.header(3, uint64_t(1) << 60, 0);
        const QString e = error_of(b);
        QVERIFY2(e.contains("tensor_count") && e.contains("1152921504606846976"), qPrintable(e));
    }

    void huge_kv_count() {
        GgufBytes b;
        b.header(3, 0, uint64_t(1) << 62);
        QVERIFY(error_of(b).contains("metadata_kv_count"));
    }

    void string_length_past_end() {
        GgufBytes b;
        b.header(3, 0, 1).str("general.name").u32(8).u64(1000).buf += "short";
        const QString e = error_of(b);
        QVERIFY2(e.contains("general.name") && e.contains("string length 1000"), qPrintable(e));
        QVERIFY2(e.contains("offset 48"), qPrintable(e));  // header 24 + key 8+12 + type 4
    }

    void huge_array_length() {
        GgufBytes b;
        b.header(3, 0, 1).str("tokenizer.ggml.scores").u32(9).u32(6).u64(uint64_t(1) << 61);
        const QString e = error_of(b);
        QVERIFY2(e.contains("tokenizer.ggml.scores") && e.contains("array length"), qPrintable(e));
    }

    void unknown_value_type() {
        GgufBytes b;
        b.header(3, 0, 1).str("x").u32(13).u32(0);
        QVERIFY(error_of(b).contains("unknown metadata value type 13"));
    }

    void dimension_zero() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("blk.0.attn_q.weight", {64, 0}, 0, 0).pad_to(32);
        const QString e = error_of(b);
        QVERIFY2(e.contains("blk.0.attn_q.weight") && e.contains("dimension 1 is 0"), qPrintable(e));
    }

    void too_many_dims() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0);
        QVERIFY(error_of(b).contains("n_dims 5"));
    }

    void byte_size_overflow() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("big", {uint64_t(1) << 31, uint64_t(1) << 31, 4}, 0, 0);
        const QString e = error_of(b);
        QVERIFY2(e.contains("big") && e.contains("overflows 64 bits"), qPrintable(e));
        GgufBytes b2;
        b2.header(3, 1, 0).tensor("huge", {uint64_t(1) << 62, 8}, 0, 0);
        QVERIFY(error_of(b2).contains("overflows 64 bits"));
    }

    void unknown_type_id() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("t", {32}, 4, 0);  // 4 was q4_2, removed from ggml
        QVERIFY(error_of(b).contains("unknown ggml type id 4"));
        GgufBytes b2;
        b2.header(3, 1, 0).tensor("t", {32}, 1000, 0);
        QVERIFY(error_of(b2).contains("unknown ggml type id 1000"));
    }

    void row_not_multiple_of_block() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("t", {33}, 8, 0);
        QVERIFY(error_of(b).contains("not a multiple of q8_0's block size 32"));
    }

    void tensor_data_past_end() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("t", {16}, 0, 0).pad_to(32).f32(1.0f);  // 4 of 64 bytes
        const QString e = error_of(b);
        QVERIFY2(e.contains("tensor 't'") && e.contains("runs past the end"), qPrintable(e));
        GgufBytes b2;  // offset near 2^64: offset + size overflows
        b2.header(3, 1, 0).tensor("t", {8}, 0, ~uint64_t(0) - 31).pad_to(32);
        QVERIFY(error_of(b2).contains("runs past the end"));
    }

    void misaligned_tensor_offset() {
        GgufBytes b;
        b.header(3, 1, 0).tensor("t", {1}, 0, 4).pad_to(32).f32(1).f32(2);
        QVERIFY(error_of(b).contains("alignment"));
    }

    void duplicate_tensor_name() {
        GgufBytes b;
        b.header(3, 2, 0).tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad_to(32);
        for (int i = 0; i < 16; ++i) b.f32(0);
        QVERIFY(error_of(b).contains("two tensors have this name"));
    }

    void duplicate_key() {
        GgufBytes b;
        b.header(3, 0, 2).kv_u32("a", 1).kv_u32("a", 2);
        QVERIFY(error_of(b).contains("duplicate metadata key"));
    }

    void bad_bool() {
        GgufBytes b;
        b.header(3, 0, 1).str("b").u32(7).u8(7);
        QVERIFY(error_of(b).contains("not 0 or 1"));
    }

    void deep_nesting_is_refused() {
        GgufBytes b;
        b.header(3, 0, 1).str("deep").u32(9);
        for (int i = 0; i < 20; ++i) b.u32(9).u64(1);
        b.u32(4).u64(0);
        QVERIFY(error_of(b).contains("nested too deeply"));
    }

    // Found by inspection while fuzzing: every array element's field label
    // held the whole key, so a 1 MiB key over a 128Ki-string array copied
    // 128 GiB of labels (minutes) and an error quoted the megabyte key. Names
    // in labels are now cut to 64 bytes plus their length.
    void long_key_is_cut_in_labels() {
        const std::string key = "tokenizer.ggml.tokens" + std::string(1 << 20, 'x');
        const uint64_t n = uint64_t(1) << 17;
        GgufBytes b;
        b.header(3, 0, 1).str(key).u32(9).u32(8).u64(n);
        for (uint64_t k = 0; k + 1 < n; ++k) b.u64(0);  // empty strings
        b.u64(5).buf += "ab";                           // the last one runs past the end
        const QString e = error_of(b);
        QVERIFY2(e.size() < 1000, qPrintable(e.left(300)));
        QVERIFY2(e.contains("metadata key 'tokenizer.ggml.tokensxxx"), qPrintable(e));
        QVERIFY2(e.contains("(1048597 bytes)"), qPrintable(e));
        QVERIFY2(e.contains("[131071]") && e.contains("string length 5"), qPrintable(e));
        // Same for a tensor name.
        GgufBytes t;
        t.header(3, 1, 0).tensor(std::string(100, 't'), {4}, 0, 0).pad_to(32);
        const QString et = error_of(t);
        QVERIFY2(et.contains("tensor '" + QString(64, 't') + "...(100 bytes)'"), qPrintable(et));
    }

    // general.alignment 0x80000000 used to be accepted (a power of two);
    // anything above 64 KiB is refused now, naming the key.
    void alignment_is_capped() {
        GgufBytes huge;
        huge.header(3, 0, 1).kv_u32("general.alignment", 0x80000000u);
        const QString e = error_of(huge);
        QVERIFY2(e.contains("general.alignment") && e.contains("2147483648") &&
                     e.contains("larger than 65536"),
                 qPrintable(e));
        GgufBytes max;
        max.header(3, 1, 1).kv_u32("general.alignment", 65536).tensor("t", {2}, 0, 0);
        max.pad_to(65536).f32(1).f32(2);
        QCOMPARE(File::open(write(max)).alignment(), 65536u);
    }

    // Crafted metadata whose in-memory form is far larger than its bytes: an
    // array of 1.5M empty arrays is 18 MB on disk but ~280 MB of Values; a
    // 96 MB file of them took 1.6 GB before it was refused. The budget is
    // checked at the array's length, before anything is reserved.
    void metadata_memory_blowup_is_refused_before_allocating() {
        const uint64_t n = 1500000;
        GgufBytes b;
        b.header(3, 0, 1).str("blowup").u32(9).u32(9).u64(n);
        b.buf.reserve(b.buf.size() + n * 12);
        for (uint64_t k = 0; k < n; ++k) b.u32(4).u64(0);  // empty uint32 arrays
        const QString e = error_of(b);
        QVERIFY2(e.contains("metadata key 'blowup' (array length)") &&
                     e.contains("more than 256 MiB of memory"),
                 qPrintable(e));
        QVERIFY2(e.contains("offset 46:"), qPrintable(e));  // at the length field
        // So are bools (1 byte each on disk, 8 in memory): 40M of them.
        GgufBytes bools;
        bools.header(3, 0, 1).str("flags").u32(9).u32(7).u64(40000000);
        bools.buf.append(40000000, '\1');
        QVERIFY(error_of(bools).contains("more than 256 MiB"));
    }

    // A FIFO given as the model used to hang forever in open(); /dev/zero
    // and a folder are refused the same way, by what they are.
    void fifo_device_and_folder_are_refused_at_once() {
        const std::string fifo = dir_.filePath("model.fifo").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        for (const auto& [path, what] : std::vector<std::pair<std::string, const char*>>{
                 {fifo, "a FIFO"},
                 {"/dev/zero", "a character device"},
                 {dir_.path().toStdString(), "a folder"}}) {
            try {
                File::open(path);
                QFAIL("opened");
            } catch (const std::runtime_error& e) {
                QVERIFY2(std::string(e.what()).find(path + ": not a regular file (it is " + what) !=
                             std::string::npos,
                         e.what());
            }
        }
    }

    // The file shrinks while it is mapped (another program truncates it):
    // reading past the new end used to kill the process with SIGBUS. Now
    // the reads see zeros and check_intact() names the file and the offset.
    void truncated_while_mapped_is_an_error_not_sigbus() {
        const std::string path = dir_.filePath("shrinking.gguf").toStdString();
        QVERIFY(QFile::copy(QString::fromStdString(kData + "/models/stories260K.gguf"),
                            QString::fromStdString(path)));
        File f = File::open(path);
        f.check_intact();  // nothing happened yet
        const uint64_t keep = f.data_offset() + 4096;
        QCOMPARE(::truncate(path.c_str(), static_cast<off_t>(keep)), 0);
        uint64_t sum = 0;
        for (const auto& t : f.tensors())
            for (uint64_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
        QVERIFY(sum > 0);  // the first page of data is still the file's
        try {
            f.check_intact();
            QFAIL("a truncated mapping passed check_intact");
        } catch (const wb::gguf::Error& e) {
            const std::string w = e.what();
            QVERIFY2(w.find(path + ": offset ") == 0 && w.find("shrank") != std::string::npos &&
                         w.find("now " + std::to_string(keep) + " bytes") != std::string::npos,
                     e.what());
            QVERIFY(e.offset() && *e.offset() >= keep - 4096 && *e.offset() <= keep + 4096);
        }
        // A fresh open of the shorter file fails on its tensors, as any cut file does.
        QVERIFY_THROWS_EXCEPTION(wb::gguf::Error, File::open(path));
    }

    void missing_file_and_directory() {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, File::open("/nonexistent/x.gguf"));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, File::open(dir_.path().toStdString()));
        GgufBytes empty;
        QVERIFY(error_of(empty).contains("file ends early"));
    }
};

}  // namespace

QTEST_APPLESS_MAIN(TestGguf)
#include "test_gguf.moc"
