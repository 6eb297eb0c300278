// Byte-level BPE tokenizer tests. Expected ids, pieces and detokenized text
// come from llama.cpp: its test-tokenizer-0 vectors (tests/data/models/vocab,
// with the Llama-3.2 and Qwen2 vocabularies rebuilt in vocab-derived checked
// against vocab/orphan-vectors) and the golden records of 23 vocabularies
// made by a llama.cpp build (tests/data/golden2/tokenizer, README §6). The
// small vocabularies written here are worked out by hand in the comments.

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/gguf_bytes.h"
#include "common/json_fixtures.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab_vectors.h"

using wb::tokenizer::StreamDetokenizer;
using wb::tokenizer::Vocab;
using wbtest::GgufBytes;

namespace {

const std::string kData = wbtest::data_dir();
const std::string kVocabDir = kData + "/models/vocab/";
const std::string kDerivedDir = kData + "/models/vocab-derived/";
const std::string kOrphanDir = kData + "/models/vocab/orphan-vectors/";
const std::string kGoldenDir = kData + "/golden2/tokenizer/";
const std::string kLlama3 = kDerivedDir + "vocab-llama-bpe-llama3.2.gguf";
const std::string kQwen2 = kDerivedDir + "vocab-qwen2-from-tiktoken.gguf";

Vocab load(const std::string& path) {
    return Vocab::from_gguf(wb::gguf::File::open(path));
}

QString ids_str(const std::vector<int32_t>& ids) {
    QStringList s;
    for (int32_t id : ids) s << QString::number(id);
    return s.join(' ');
}

QString shown(const std::string& s) {
    return QString::fromUtf8(
        QByteArray(s.data(), static_cast<qsizetype>(s.size())).toPercentEncoding(" "));
}

// The GGUF each golden record file was made from (README §6).
std::string golden_vocab_path(const QString& name) {
    if (name.startsWith("ggml-vocab-")) return kVocabDir + name.toStdString() + ".gguf";
    if (name.startsWith("vocab-")) return kDerivedDir + name.toStdString() + ".gguf";
    const QString model = name.mid(QString("tiny-").size());  // tiny-<model>: the F16 model's vocab
    return kData + "/golden2/" + model.toStdString() + "/" + model.toStdString() + "-f16.gguf";
}

// A hand-made byte-level BPE vocabulary: tokens (type 1 normal, 3 control),
// merges in rank order, tokenizer.ggml.pre.
GgufBytes bpe_vocab(const std::vector<std::pair<std::string, int32_t>>& toks,
                    const std::vector<std::string>& merges, const std::string& pre) {
    GgufBytes b;
    b.header(3, 0, 5);
    b.kv_str("tokenizer.ggml.model", "gpt2");
    b.kv_str("tokenizer.ggml.pre", pre);
    b.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(toks.size());
    for (const auto& t : toks) b.str(t.first);
    b.str("tokenizer.ggml.token_type").u32(9).u32(5).u64(toks.size());
    for (const auto& t : toks) b.pod<int32_t>(t.second);
    b.str("tokenizer.ggml.merges").u32(9).u32(8).u64(merges.size());
    for (const auto& m : merges) b.str(m);
    return b;
}

}  // namespace

class TestBpe : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int counter_ = 0;

    Vocab load_bytes(const GgufBytes& b) {
        const std::string path = dir_.filePath(QString("v%1.gguf").arg(counter_++)).toStdString();
        b.write(path);
        return load(path);
    }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // llama.cpp's test-tokenizer-0 vectors: ids with add_special = false,
    // parse_special = false; and the pieces spell the input again.
    void vectors_data() {
        QTest::addColumn<QString>("vocab");
        QTest::addColumn<QString>("vectors");
        for (const char* v :
             {"gpt-2", "starcoder", "refact", "falcon", "deepseek-coder", "deepseek-llm", "mpt"}) {
            const QString f = QString::fromStdString(kVocabDir) + "ggml-vocab-" + v + ".gguf";
            QTest::newRow(v) << f << f;
        }
        QTest::newRow("llama-bpe (Llama 3.2)")
            << QString::fromStdString(kLlama3)
            << QString::fromStdString(kOrphanDir + "ggml-vocab-llama-bpe.gguf");
        QTest::newRow("qwen2") << QString::fromStdString(kQwen2)
                               << QString::fromStdString(kOrphanDir + "ggml-vocab-qwen2.gguf");
    }

    void vectors() {
        QFETCH(QString, vocab);
        QFETCH(QString, vectors);
        const Vocab v = load(vocab.toStdString());
        QCOMPARE(std::string(v.kind()), std::string("bpe"));
        const auto inputs = wbtest::read_inp(vectors.toStdString() + ".inp");
        const auto expected = wbtest::read_out(vectors.toStdString() + ".out");
        QCOMPARE(inputs.size(), expected.size());
        QVERIFY(inputs.size() >= 46);
        QStringList failures;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const auto got = v.tokenize(inputs[i], false);
            if (got != expected[i]) {
                failures << QString("case %1 '%2': got [%3] want [%4]")
                                .arg(i)
                                .arg(shown(inputs[i]).left(60), ids_str(got), ids_str(expected[i]));
                continue;
            }
            // decode(encode(s)) == s: byte-level BPE keeps every byte.
            std::string text;
            for (int32_t id : got) text += v.token_to_piece(id);
            if (text != inputs[i])
                failures << QString("case %1: pieces do not spell the input").arg(i);
        }
        for (const QString& f : failures) qWarning("%s", qPrintable(f));
        QCOMPARE(failures.size(), 0);
    }

    // Golden records: 82 strings (46 test strings + 36 hard ones) per
    // vocabulary, tokenized by llama.cpp both ways, with pieces and
    // detokenized text.
    void goldenRecords_data() {
        QTest::addColumn<QString>("name");
        const QStringList files = QDir(QString::fromStdString(kGoldenDir))
                                      .entryList({"*.jsonl"}, QDir::Files, QDir::Name);
        QCOMPARE(files.size(), 23);
        for (const QString& f : files) {
            const QString name = QFileInfo(f).completeBaseName();
            QTest::newRow(qPrintable(name)) << name;
        }
    }

    void goldenRecords() {
        QFETCH(QString, name);
        const std::string path = golden_vocab_path(name);
        if (name == "ggml-vocab-bert-bge") {
            // WordPiece is not implemented: refused with a clear message.
            try {
                load(path);
                QFAIL("a WordPiece vocabulary loaded");
            } catch (const std::runtime_error& e) {
                QVERIFY2(QString(e.what()).contains("unsupported tokenizer model 'bert'"),
                         e.what());
                QVERIFY2(QString(e.what()).contains("WordPiece"), e.what());
            }
            return;
        }
        if (!QFileInfo::exists(QString::fromStdString(path))) {
            QSKIP(qPrintable("vocabulary file not in tests/data: " + QString::fromStdString(path)));
        }
        const Vocab v = load(path);
        const auto records = wbtest::read_jsonl(kGoldenDir + name.toStdString() + ".jsonl");
        QCOMPARE(records.size(), size_t{82});
        QStringList failures;
        for (const QJsonObject& r : records) {
            const QString case_name = r["name"].toString();
            const std::string text = wbtest::golden_bytes(r["text"]);
            auto check_ids = [&](const char* field, const std::vector<int32_t>& got) {
                const auto want = wbtest::ids(r[field]);
                if (got != want) {
                    failures << QString("%1 %2: got [%3] want [%4]")
                                    .arg(case_name, field, ids_str(got), ids_str(want));
                    return false;
                }
                return true;
            };
            auto check_text = [&](const char* field, const std::string& got) {
                const std::string want = wbtest::golden_bytes(r[field]);
                if (got != want) {
                    failures << QString("%1 %2: got '%3' want '%4'")
                                    .arg(case_name, field, shown(got), shown(want));
                }
            };
            const auto ids = v.tokenize(text, false, false);
            if (check_ids("ids", ids)) {
                const QJsonArray pieces = r["pieces"].toArray();
                for (qsizetype i = 0; i < pieces.size(); ++i) {
                    const std::string got = v.token_to_piece(ids[static_cast<size_t>(i)]);
                    if (got != wbtest::golden_bytes(pieces[i])) {
                        failures << QString("%1 piece %2 of id %3: got '%4' want '%5'")
                                        .arg(case_name)
                                        .arg(i)
                                        .arg(ids[static_cast<size_t>(i)])
                                        .arg(shown(got), shown(wbtest::golden_bytes(pieces[i])));
                    }
                }
                check_text("detok", v.detokenize(ids));
            }
            const auto special = v.tokenize(text, true, true);
            if (check_ids("ids_add_special_parse_special", special)) {
                check_text("detok_add_special_parse_special", v.detokenize(special, true, true));
            }
        }
        for (const QString& f : failures.mid(0, 20)) qWarning("%s", qPrintable(f));
        QCOMPARE(failures.size(), 0);
    }

    void mergesFollowRanksHandWorked() {
        // Tokens: a b c ab bc abc aa, "Ġ" (space) and "Ġa".
        const std::vector<std::pair<std::string, int32_t>> toks = {{"a", 1},
                                                                   {"b", 1},
                                                                   {"c", 1},
                                                                   {"ab", 1},
                                                                   {"bc", 1},
                                                                   {"abc", 1},
                                                                   {"aa", 1},
                                                                   {"\xC4\xA0", 1},
                                                                   {"\xC4\xA0"
                                                                    "a",
                                                                    1}};
        // "b c" ranks before "a b": abc -> a|bc -> abc.
        const Vocab bc_first =
            load_bytes(bpe_vocab(toks, {"b c", "a b", "a bc", "a a", "\xC4\xA0 a"}, "gpt-2"));
        QCOMPARE(ids_str(bc_first.tokenize("abc", false)), QString("5"));
        // "a b" first: ab|c, and no "ab c" merge -> ab c.
        const Vocab ab_first =
            load_bytes(bpe_vocab(toks, {"a b", "b c", "a bc", "a a", "\xC4\xA0 a"}, "gpt-2"));
        QCOMPARE(ids_str(ab_first.tokenize("abc", false)), QString("3 2"));
        // "aaa": both (a,a) pairs have the same rank; the leftmost merges
        // first -> aa|a (rightmost first would give a|aa = 0 6).
        QCOMPARE(ids_str(ab_first.tokenize("aaa", false)), QString("6 0"));
        // " a" is one word of the gpt-2 pre-tokenizer; its space is byte-
        // encoded as "Ġ" (U+0120) and merges with a.
        QCOMPARE(ids_str(ab_first.tokenize(" a", false)), QString("8"));
        QCOMPARE(ab_first.token_to_piece(8), std::string(" a"));
        // "a b": two words, "a" and " b"; "Ġb" has no merge -> Ġ b.
        QCOMPARE(ids_str(ab_first.tokenize("a b", false)), QString("0 7 1"));
        // A character without a token ('x') and not merged is dropped, as
        // llama.cpp drops bytes that have no one-byte token.
        QCOMPARE(ids_str(ab_first.tokenize("axb", false)), QString("0 1"));
        // A duplicate merge line keeps its first rank.
        const Vocab dup = load_bytes(bpe_vocab(toks, {"a b", "b c", "a b"}, "gpt-2"));
        QCOMPARE(dup.merge_rank("a", "b"), 0);
        QCOMPARE(dup.merge_rank("b", "c"), 1);
        QCOMPARE(dup.merge_rank("c", "a"), -1);
        QCOMPARE(dup.n_merges(), size_t{2});
    }

    void ignoreMergesKeepsWholeTokens() {
        // Llama 3's pre-tokenizer sets ignore_merges: a word that is a token
        // is emitted whole even when the merges would split it (only "a b"
        // exists, so merging gives ab|c).
        const std::vector<std::pair<std::string, int32_t>> toks = {
            {"a", 1}, {"b", 1}, {"c", 1}, {"ab", 1}, {"abc", 1}};
        const Vocab gpt2 = load_bytes(bpe_vocab(toks, {"a b"}, "gpt-2"));
        QCOMPARE(ids_str(gpt2.tokenize("abc", false)), QString("3 2"));
        const Vocab llama3 = load_bytes(bpe_vocab(toks, {"a b"}, "llama-bpe"));
        QCOMPARE(ids_str(llama3.tokenize("abc", false)), QString("4"));
        QCOMPARE(llama3.pre_family(), std::string("llama3"));
        QVERIFY(llama3.add_bos());  // llama3's default (BOS id 11 is absent here)
        QVERIFY(!gpt2.add_bos());
    }

    void controlTokensParsedOnlyWhenAsked() {
        // Qwen2.5 ids (llama.cpp golden hard_chatml_specials):
        // <|im_start|> 151644, "user" 872, "\n" 198, "hi" 6023, <|im_end|> 151645.
        const Vocab v = load(kQwen2);
        const std::string text = "<|im_start|>user\nhi<|im_end|>";
        QCOMPARE(ids_str(v.tokenize(text, false, true)), QString("151644 872 198 6023 151645"));
        // Typed by a user, the markup stays text: no control ids appear.
        const auto plain = v.tokenize(text, false, false);
        for (int32_t id : plain) QVERIFY2(!v.is_control(id), qPrintable(QString::number(id)));
        std::string back;
        for (int32_t id : plain) back += v.token_to_piece(id);
        QCOMPARE(back, text);
        // Control pieces are hidden unless asked for.
        QCOMPARE(v.token_to_piece(151645), std::string());
        QCOMPARE(v.token_to_piece(151645, true), std::string("<|im_end|>"));
    }

    void endOfGenerationTokens() {
        // Llama 3.2 Instruct: the file names <|eot_id|> 128009 as EOS;
        // <|end_of_text|> 128001 ends generation too (found by text, as
        // llama.cpp does); 3.2 has no <|eom_id|> (128008 is a reserved
        // token); <|start_header_id|> 128006 is control, not EOG.
        const Vocab l = load(kLlama3);
        QCOMPARE(l.bos(), 128000);
        QCOMPARE(l.eos(), 128009);
        QVERIFY(l.eot() == 128001 || l.eot() == 128009);  // both are end-of-turn texts
        QCOMPARE(l.eom(), -1);
        QCOMPARE(l.eog_ids(), (std::vector<int32_t>{128001, 128009}));
        QVERIFY(!l.is_eog(128006));
        QVERIFY(l.is_control(128006));
        QVERIFY(l.add_bos());
        QCOMPARE(l.pre(), std::string("llama-bpe"));
        // Qwen2.5: <|endoftext|> 151643, <|im_end|> 151645 end generation.
        const Vocab q = load(kQwen2);
        QVERIFY(q.is_eog(151643));
        QVERIFY(q.is_eog(151645));
        QVERIFY(!q.is_eog(151644));
        QVERIFY(!q.add_bos());
        const auto eog = q.eog_ids();
        QVERIFY(std::find(eog.begin(), eog.end(), 151645) != eog.end());
    }

    void streamingEmitsWholeCharacters() {
        // GPT-2 spells "€" (E2 82 AC) with byte tokens: the streaming
        // detokenizer holds the bytes back until the character is whole.
        const Vocab v = load(kVocabDir + "ggml-vocab-gpt-2.gguf");
        const std::string text = "a\xE2\x82\xAC\xF0\x9F\x98\x80";  // a € 😀
        const auto ids = v.tokenize(text, false);
        QVERIFY(ids.size() >= 3);
        StreamDetokenizer sd(v);
        std::string out;
        for (int32_t id : ids) {
            const std::string part = sd.push(id);
            std::string copy;
            QCOMPARE(wb::tokenizer::utf8_append_valid(part, true, copy), part.size());
            QCOMPARE(copy, part);  // only whole, valid UTF-8 is ever emitted
            out += part;
        }
        out += sd.flush();
        QCOMPARE(out, text);
    }

    void invalidUtf8IsTokenizedLikeLlamaCpp() {
        // llama.cpp turns each byte that starts no valid sequence into
        // U+FFFD before splitting, so the pieces spell EF BF BD there.
        const Vocab v = load(kLlama3);
        const auto ids = v.tokenize(
            "a\xFF"
            "b",
            false);
        std::string back;
        for (int32_t id : ids) back += v.token_to_piece(id);
        QCOMPARE(back, std::string("a\xEF\xBF\xBD"
                                   "b"));
    }

    void unsupportedKindsAreRefused() {
        auto message = [&](const GgufBytes& b) -> QString {
            try {
                load_bytes(b);
            } catch (const std::exception& e) {
                return e.what();
            }
            return "no error";
        };
        const std::vector<std::pair<std::string, int32_t>> toks = {{"a", 1}};
        QVERIFY(message(bpe_vocab(toks, {}, "kimi-k2"))
                    .contains("unsupported pre-tokenizer 'kimi-k2' (tokenizer.ggml.pre)"));
        // Merges are required for BPE.
        GgufBytes no_merges;
        no_merges.header(3, 0, 2);
        no_merges.kv_str("tokenizer.ggml.model", "gpt2");
        no_merges.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(1).str("a");
        QVERIFY(message(no_merges).contains("tokenizer.ggml.merges: missing key"));
        GgufBytes t5;
        t5.header(3, 0, 2);
        t5.kv_str("tokenizer.ggml.model", "t5");
        t5.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(1).str("a");
        QVERIFY(message(t5).contains("unsupported tokenizer model 't5'"));
    }

    void adversarialWhitespaceFinishes() {
        // Long runs of whitespace and punctuation through every tested
        // pre-tokenizer: each must finish (a match limit bounds PCRE2) and
        // keep every byte. Times are printed, not asserted.
        std::string text(20000, ' ');
        text += "x";
        text += std::string(20000, '\n');
        text += std::string(5000, '!');
        text += " \t" + std::string(10000, '\xA0') + "y";
        for (const char* f : {"ggml-vocab-deepseek-llm.gguf", "ggml-vocab-deepseek-coder.gguf",
                              "ggml-vocab-falcon.gguf", "ggml-vocab-gpt-neox.gguf"}) {
            const Vocab v = load(kVocabDir + f);
            QElapsedTimer t;
            t.start();
            const auto ids = v.tokenize(text, false);
            qInfo("%s: %zu bytes -> %zu tokens in %lld ms", f, text.size(), ids.size(),
                  static_cast<long long>(t.elapsed()));
            QVERIFY(!ids.empty());
        }
    }

    // Hostile inputs through the BPE merge (bigram_merge.h): a word of a
    // million letters (one pre-tokenizer word, one symbol list of 1M
    // characters), a million '(' and "ab" doubled 19 times, on llama 3's
    // and qwen2's vocabularies. Each must finish and round-trip every
    // byte; times are printed, not asserted.
    void millionCharacterInputs() {
        std::string doubled = "ab";
        for (int i = 0; i < 19; ++i) doubled += doubled;
        for (const std::string& path : {kLlama3, kQwen2}) {
            const Vocab v = load(path);
            for (const std::string& text :
                 {std::string(1000000, 'a'), std::string(1000000, '('), doubled}) {
                QElapsedTimer t;
                t.start();
                const auto ids = v.tokenize(text, false);
                qInfo("%zu bytes -> %zu tokens in %lld ms", text.size(), ids.size(),
                      static_cast<long long>(t.elapsed()));
                QVERIFY(!ids.empty());
                QVERIFY(ids.size() <= text.size());
                QVERIFY(v.detokenize(ids) == text);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestBpe)
#include "test_bpe.moc"
