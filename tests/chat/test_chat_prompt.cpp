// Chat prompts end to end: a model's own template from its GGUF, rendered
// and tokenized as llama.cpp does it. Expected text and ids are llama.cpp's
// `chat` golden records for the tiny Llama-3.2 and Qwen2.5 models
// (tests/data/golden2/<model>/goldens, README §4: rendered by
// common_chat_templates_apply with date_string "26 Jul 2024", tokenized with
// add_special and parse_special). The built-in formats are checked against
// their published layouts, written out by hand below.

#include <QtTest>
#include <algorithm>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "common/data_dir.h"
#include "common/gguf_bytes.h"
#include "common/json_fixtures.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

using wb::chat::BuiltinFormat;
using wb::chat::ChatTemplate;
using wb::chat::Message;
using wb::tokenizer::Vocab;

namespace {

const std::string kData = wbtest::data_dir();

struct Model {
    wb::gguf::File file;
    Vocab vocab;
};

Model load(const std::string& path) {
    wb::gguf::File f = wb::gguf::File::open(path);
    Vocab v = Vocab::from_gguf(f);
    return {std::move(f), std::move(v)};
}

QJsonObject chat_record(const std::string& model) {
    const QJsonObject doc = wbtest::read_json(kData + "/golden2/" + model + "/goldens/f16.llamacpp.kvf32.json");
    for (const QJsonValue& r : doc["results"].toArray()) {
        if (r.toObject()["name"].toString() == "chat") return r.toObject();
    }
    qFatal("no chat record for %s", model.c_str());
}

std::vector<Message> messages_of(const QJsonObject& record) {
    std::vector<Message> out;
    for (const QJsonValue& m : record["messages"].toArray()) {
        out.push_back({m.toObject()["role"].toString().toStdString(), m.toObject()["content"].toString().toStdString()});
    }
    return out;
}

std::string read_text(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", path.c_str());
    return f.readAll().toStdString();
}

const std::vector<Message> kConversation = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};

}  // namespace

class TestChatPrompt : public QObject {
    Q_OBJECT

  private slots:
    void modelTemplateGivesLlamaCppIds_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("llama3 (Llama-3.2 template, BPE llama-bpe)") << "llama3";
        QTest::newRow("qwen2 (Qwen2.5 template, BPE qwen2)") << "qwen2";
    }

    void modelTemplateGivesLlamaCppIds() {
        QFETCH(QString, model);
        const std::string m = model.toStdString();
        const Model md = load(kData + "/golden2/" + m + "/" + m + "-f16.gguf");
        const auto choice = wb::chat::choose_template(md.file, md.vocab);
        QVERIFY2(choice.note.empty(), choice.note.c_str());
        QCOMPARE(choice.tmpl.name(), std::string("model"));
        const QJsonObject rec = chat_record(m);
        const auto prompt = wb::chat::build_prompt(choice.tmpl, md.vocab, messages_of(rec), true,
                                                   {{"date_string", "26 Jul 2024"}});
        QCOMPARE(prompt.text, rec["rendered"].toString().toStdString());
        QCOMPARE(prompt.ids, wbtest::ids(rec["prompt_ids"]));
        QVERIFY(prompt.parse_special);
        QCOMPARE(prompt.add_bos, md.vocab.add_bos());
        QCOMPARE(prompt.pre_tokenizer, m == "llama3" ? std::string("llama3") : std::string("qwen2"));
        QCOMPARE(prompt.template_sha256.size(), size_t{64});
        QCOMPARE(prompt.stop_ids, md.vocab.eog_ids());
        // The turn ends with the template's end-of-turn token, which stops generation.
        const int32_t eot = md.vocab.find(m == "llama3" ? "<|eot_id|>" : "<|im_end|>");
        QVERIFY(eot >= 0);
        QVERIFY(std::find(prompt.stop_ids.begin(), prompt.stop_ids.end(), eot) != prompt.stop_ids.end());
    }

    void bosIsNotDoubled() {
        // The Llama-3.2 template writes {{ bos_token }} first; the vocabulary
        // adds BOS too, so the rendering loses its BOS text and the ids hold
        // one BOS (llama.cpp common_chat_templates_apply).
        const Model md = load(kData + "/golden2/llama3/llama3-f16.gguf");
        const ChatTemplate t = wb::chat::choose_template(md.file, md.vocab).tmpl;
        const std::string raw = t.render({{"user", "x"}}, true, md.vocab.text(md.vocab.bos()), "", {{"date_string", "1 Jan 2025"}});
        QVERIFY(raw.rfind("<|begin_of_text|>", 0) == 0);
        const auto p = wb::chat::build_prompt(t, md.vocab, {{"user", "x"}}, true, {{"date_string", "1 Jan 2025"}});
        QVERIFY(p.text.rfind("<|begin_of_text|>", 0) != 0);
        QCOMPARE(std::count(p.ids.begin(), p.ids.end(), md.vocab.bos()), 1);
        QCOMPARE(p.ids.front(), md.vocab.bos());
    }

    void builtinFormats_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("bos");
        QTest::addColumn<QString>("eos");
        QTest::addColumn<QString>("expected");
        QTest::newRow("chatml") << "chatml" << "" << ""
                                << "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                                   "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
                                   "<|im_start|>assistant\n";
        QTest::newRow("llama3") << "llama3" << "<|begin_of_text|>" << "<|eot_id|>"
                                << "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                                   "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                                   "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                                   "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                                   "<|start_header_id|>assistant<|end_header_id|>\n\n";
        QTest::newRow("llama2") << "llama2" << "<s>" << "</s>"
                                << "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]";
        QTest::newRow("gemma") << "gemma" << "<bos>" << "<eos>"
                               << "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
                                  "Hello!<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n";
        QTest::newRow("phi3") << "phi3" << "<s>" << "<|endoftext|>"
                              << "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
                                 "<|user|>\nBye<|end|>\n<|assistant|>\n";
        QTest::newRow("mistral") << "mistral" << "<s>" << "</s>"
                                 << "<s>[INST] Be brief.\n\nHi [/INST]Hello!</s>[INST] Bye [/INST]";
    }

    void builtinFormats() {
        QFETCH(QString, name);
        QFETCH(QString, bos);
        QFETCH(QString, eos);
        QFETCH(QString, expected);
        const auto f = wb::chat::builtin_format_by_name(name.toUpper().toStdString());  // case-insensitive
        QVERIFY(f.has_value());
        const ChatTemplate t = ChatTemplate::builtin(*f);
        QCOMPARE(t.name(), name.toStdString());
        QCOMPARE(t.builtin_format(), f);
        QCOMPARE(t.render(kConversation, true, bos.toStdString(), eos.toStdString()), expected.toStdString());
    }

    void guessFormatFromVocabulary() {
        auto guess = [](const std::string& path) { return wb::chat::guess_builtin_format(load(path).vocab); };
        QCOMPARE(guess(kData + "/models/vocab-derived/vocab-qwen2-from-tiktoken.gguf"), BuiltinFormat::ChatML);
        QCOMPARE(guess(kData + "/models/vocab-derived/vocab-llama-bpe-llama3.2.gguf"), BuiltinFormat::Llama3);
        QCOMPARE(guess(kData + "/models/vocab/ggml-vocab-phi-3.gguf"), BuiltinFormat::Phi3);
        QCOMPARE(guess(kData + "/models/stories260K.gguf"), BuiltinFormat::Llama2);
        QCOMPARE(guess(kData + "/models/vocab/ggml-vocab-gpt-2.gguf"), BuiltinFormat::ChatML);
    }

    void fallbackWhenTheModelHasNoUsableTemplate() {
        // stories260K has no tokenizer.chat_template: a base model, plain
        // text completion with a note naming the file (the one rule).
        const std::string stories_path = kData + "/models/stories260K.gguf";
        const Model stories = load(stories_path);
        auto c = wb::chat::choose_template(stories.file, stories.vocab);
        QVERIFY(c.tmpl.is_plain_text());
        QCOMPARE(c.tmpl.name(), std::string("none"));
        QVERIFY2(c.note.find("no chat template in " + stories_path + ": plain text completion") !=
                     std::string::npos,
                 c.note.c_str());
        // Rendered as text: system, then each user turn on a new line, the
        // assistant's reply continuing the line before it.
        QCOMPARE(c.tmpl.render({{"system", "S"}, {"user", "U1"}, {"assistant", " A1"}, {"user", "U2"}},
                               true, "<s>", "</s>"),
                 std::string("S\nU1 A1\nU2"));
        // A format picked by name wins, with no note; "none" is plain text.
        c = wb::chat::choose_template(stories.file, stories.vocab, "llama2");
        QCOMPARE(c.tmpl.name(), std::string("llama2"));
        QVERIFY(c.note.empty());
        c = wb::chat::choose_template(stories.file, stories.vocab, "none");
        QVERIFY(c.tmpl.is_plain_text());
        QVERIFY(c.note.empty());
        // A template that does not parse: the note names the problem and line.
        QTemporaryDir dir;
        wbtest::GgufBytes b;
        b.header(3, 0, 3);
        b.kv_str("tokenizer.ggml.model", "llama");
        b.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(3).str("<unk>").str("<s>").str("</s>");
        b.kv_str("tokenizer.chat_template", "{% for m in messages %}\n{{ m.content | nosuch }}{% endfor %}");
        const std::string path = dir.filePath("bad.gguf").toStdString();
        b.write(path);
        const Model bad = load(path);
        c = wb::chat::choose_template(bad.file, bad.vocab);
        QCOMPARE(c.tmpl.name(), std::string("llama2"));
        QVERIFY2(c.note.find("model:2: unknown filter 'nosuch'") != std::string::npos, c.note.c_str());
        // A named choice wins; an unknown name is an error listing the names.
        QCOMPARE(wb::chat::choose_template(bad.file, bad.vocab, "gemma").tmpl.name(), std::string("gemma"));
        try {
            wb::chat::choose_template(bad.file, bad.vocab, "vicuna");
            QFAIL("no error");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(std::string(e.what()).find("chatml, llama3, llama2, gemma, phi3, mistral") != std::string::npos, e.what());
        }
    }

    void templateErrorsReachTheCaller() {
        // Gemma 2's template refuses a system message (raise_exception); the
        // caller gets the template's own words and line.
        const Model qwen = load(kData + "/golden2/qwen2/qwen2-f16.gguf");
        const std::string source = read_text(kData + "/chat/templates/google-gemma-2-2b-it.jinja");
        const ChatTemplate t = ChatTemplate::from_source(source, "gemma-2");
        try {
            wb::chat::build_prompt(t, qwen.vocab, kConversation);
            QFAIL("no error");
        } catch (const wb::chat::jinja::Error& e) {
            QCOMPARE(e.kind(), wb::chat::jinja::Error::Kind::Raised);
            QCOMPARE(e.message(), std::string("System role not supported"));
            QVERIFY(QString(e.what()).startsWith("gemma-2:"));
        }
    }
};

QTEST_GUILESS_MAIN(TestChatPrompt)
#include "test_chat_prompt.moc"
