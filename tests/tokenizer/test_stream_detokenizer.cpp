// StreamDetokenizer tests on the real stories260K vocab, whose byte token for
// byte b is id 3 + b (MANIFEST.md §3). Expected UTF-8 and U+FFFD
// substitutions are worked out by hand from the Unicode standard (§3.9,
// Table 3-7 and the maximal-subpart examples of Table 3-8).

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "common/json_fixtures.h"
#include "common/data_dir.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

using wb::tokenizer::StreamDetokenizer;
using wb::tokenizer::Vocab;

namespace {

const std::string kData = wbtest::data_dir();
const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD

int32_t byte_id(unsigned b) {
    return static_cast<int32_t>(3 + b);
}

// Pushes the byte tokens of `bytes` one by one and returns what each push
// produced, joined by '|' (raw bytes: no QString conversion, which would
// hide ill-formed UTF-8 behind its own U+FFFD).
std::string push_bytes(StreamDetokenizer& s, std::initializer_list<unsigned> bytes) {
    std::string out;
    bool first = true;
    for (unsigned b : bytes) {
        if (!first) out += '|';
        first = false;
        out += s.push(byte_id(b));
    }
    return out;
}

}  // namespace

class TestStreamDetokenizer : public QObject {
    Q_OBJECT

    Vocab vocab_ = Vocab::from_gguf(wb::gguf::File::open(kData + "/models/stories260K.gguf"));

  private slots:
    void euroSignWaitsForItsLastByte() {
        StreamDetokenizer s(vocab_);
        // U+20AC EURO SIGN = E2 82 AC.
        QCOMPARE(s.push(byte_id(0xE2)), std::string());
        QCOMPARE(s.pending_bytes(), size_t{1});
        QCOMPARE(s.push(byte_id(0x82)), std::string());
        QCOMPARE(s.pending_bytes(), size_t{2});
        QCOMPARE(s.push(byte_id(0xAC)), std::string("\xE2\x82\xAC"));
        QCOMPARE(s.pending_bytes(), size_t{0});
        QCOMPARE(s.flush(), std::string());
    }

    void fourByteEmoji() {
        // U+1F600 GRINNING FACE = F0 9F 98 80.
        StreamDetokenizer s(vocab_);
        QCOMPARE(push_bytes(s, {0xF0, 0x9F, 0x98, 0x80}), std::string("|||\xF0\x9F\x98\x80"));
        QCOMPARE(s.flush(), std::string());
    }

    void normalTokensPassStraightThrough() {
        StreamDetokenizer s(vocab_);
        QCOMPARE(s.push(403), std::string(" Once"));  // ▁Once: the space is kept
        QCOMPARE(s.push(1), std::string());           // <s> is control
        StreamDetokenizer sp(vocab_, /*special=*/true);
        QCOMPARE(sp.push(1), std::string("<s>"));
    }

    void textAfterCharacterComesWithIt() {
        // "é" (C3 A9) then "▁Once" arrive as C3 | A9 | ▁Once.
        StreamDetokenizer s(vocab_);
        QCOMPARE(s.push(byte_id(0xC3)), std::string());
        QCOMPARE(s.push(byte_id(0xA9)), std::string("\xC3\xA9"));
        QCOMPARE(s.push(403), std::string(" Once"));
    }

    void truncatedSequenceBecomesReplacementOnFlush() {
        StreamDetokenizer s(vocab_);
        QCOMPARE(push_bytes(s, {0xE2, 0x82}), std::string("|"));
        // E2 82 is one maximal subpart -> one U+FFFD.
        QCOMPARE(s.flush(), kFffd);
        QCOMPARE(s.pending_bytes(), size_t{0});
        QCOMPARE(s.flush(), std::string());
        // The stream goes on normally afterwards.
        QCOMPARE(s.push(byte_id('A')), std::string("A"));
    }

    void brokenSequenceIsReplacedWithoutWaiting() {
        StreamDetokenizer s(vocab_);
        // E2 then 'A': E2 can no longer complete -> U+FFFD, then "A".
        QCOMPARE(s.push(byte_id(0xE2)), std::string());
        QCOMPARE(s.push(byte_id('A')), kFffd + "A");
        // FF never starts a sequence.
        QCOMPARE(s.push(byte_id(0xFF)), kFffd);
        // C0 80 (overlong NUL): C0 is never a lead, 80 is a stray
        // continuation -> two U+FFFD.
        QCOMPARE(push_bytes(s, {0xC0, 0x80}), kFffd + "|" + kFffd);
        // ED A0 80 (a UTF-16 surrogate): ED allows only 80..9F next -> three.
        QCOMPARE(push_bytes(s, {0xED, 0xA0, 0x80}), "|" + kFffd + kFffd + "|" + kFffd);
        // F4 90 (above U+10FFFF) -> two.
        QCOMPARE(push_bytes(s, {0xF4, 0x90}), "|" + kFffd + kFffd);
        QCOMPARE(s.flush(), std::string());
    }

    void badIdLeavesStateAlone() {
        StreamDetokenizer s(vocab_);
        QCOMPARE(s.push(byte_id(0xE2)), std::string());
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, s.push(512));
        QCOMPARE(s.pending_bytes(), size_t{1});
        QCOMPARE(push_bytes(s, {0x82, 0xAC}), std::string("|\xE2\x82\xAC"));
    }

    void goldenStreamEqualsPieces() {
        int records = 0;
        for (const QJsonObject& r :
             wbtest::read_jsonl(kData + "/golden/stories260K_greedy.jsonl")) {
            StreamDetokenizer s(vocab_);
            std::string streamed, pieces;
            for (const auto& v : r["generated_token_ids"].toArray()) {
                streamed += s.push(v.toInt());
                pieces += vocab_.token_to_piece(v.toInt());
            }
            streamed += s.flush();
            QCOMPARE(streamed, pieces);
            QCOMPARE(QString::fromStdString(streamed), r["generated_text"].toString());
            ++records;
        }
        QCOMPARE(records, 6);
    }

    void roundTripOfMixedTextThroughTokens() {
        // Tokenize text with characters that fall back to bytes in this
        // 512-token vocab, then stream it back: the original text returns.
        const std::string text =
            "Tim saw a \xF0\x9F\x90\xB6 and said \xE2\x80\x9Chi\xE2\x80\x9D \xE4\xBD\xA0";
        const auto ids = vocab_.tokenize(text, true);
        StreamDetokenizer s(vocab_);
        std::string out;
        for (int32_t id : ids) {
            const std::string part = s.push(id);
            QVERIFY(
                QString::fromUtf8(part.data(), static_cast<qsizetype>(part.size())).toStdString() ==
                part);  // every chunk is valid UTF-8 on its own
            out += part;
        }
        out += s.flush();
        QCOMPARE(out, " " + text);
    }
};

QTEST_GUILESS_MAIN(TestStreamDetokenizer)
#include "test_stream_detokenizer.moc"
