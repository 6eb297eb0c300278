// Chat template interpreter tests. Expected renderings come from Python's
// Jinja2 (Debian python3-jinja2) set up as transformers sets it up, written
// by tests/data/chat/render_expected.py into tests/data/chat/expected/ (every
// template x 4 conversations x generation prompt on/off) and
// tests/data/chat/expressions.json (one rule per snippet); the 40 renderings
// in chat_template_goldens.json were made independently with Jinja2 3.1.6.

#include <QDir>
#include <QFileInfo>
#include <QtTest>
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/json_value.h"
#include "chat/jinja/template.h"
#include "common/data_dir.h"

using wb::chat::jinja::Error;
using wb::chat::jinja::RenderOptions;
using wb::chat::jinja::Template;
using wb::chat::jinja::Value;
using json = nlohmann::ordered_json;

namespace {

const std::string kChat = wbtest::data_dir() + "/chat/";

std::string read_file(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path);
    const QByteArray b = f.readAll();
    return std::string(b.constData(), static_cast<size_t>(b.size()));
}

json read_json(const std::string& path) {
    return json::parse(read_file(path));
}

// The oracle's strftime_now: 2024-07-26.
RenderOptions fixed_clock() {
    RenderOptions o;
    o.strftime_now = [](const std::string& fmt) {
        std::tm tm{};
        tm.tm_year = 2024 - 1900;
        tm.tm_mon = 6;
        tm.tm_mday = 26;
        tm.tm_wday = 5;  // a Friday
        tm.tm_yday = 207;
        char buf[128];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        const size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
#pragma GCC diagnostic pop
        return std::string(buf, n);
    };
    return o;
}

Value vars(const json& messages, bool add_generation_prompt, const std::string& bos,
           const std::string& eos) {
    json v = json::object();
    v["messages"] = messages;
    v["add_generation_prompt"] = add_generation_prompt;
    v["bos_token"] = bos;
    v["eos_token"] = eos;
    return wb::chat::jinja::from_json(v);
}

// Jinja2 exception class -> the error kind the interpreter reports.
Error::Kind kind_of(const std::string& python_type) {
    if (python_type == "UndefinedError") return Error::Kind::Undefined;
    if (python_type == "TemplateError") return Error::Kind::Raised;
    if (python_type == "SecurityError") return Error::Kind::Security;
    if (python_type == "OverflowError") return Error::Kind::Limit;
    if (python_type == "TemplateSyntaxError" || python_type == "TemplateAssertionError" ||
        python_type == "TemplateRuntimeError") {
        return Error::Kind::Syntax;  // an unknown filter or test
    }
    return Error::Kind::Type;
}

QString shown(const std::string& s) {
    return QString::fromStdString(s).replace("\n", "\\n");
}

// Templates whose renderings are not reproduced, with the reason. Each must
// still fail with a clear error rather than render something else.
const std::map<std::string, std::string> kUnsupported = {};

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

  private slots:
    void expressions() {
        const json doc = read_json(kChat + "expressions.json");
        const Value variables = wb::chat::jinja::from_json(doc["variables"]);
        QStringList failures;
        for (const json& c : doc["cases"]) {
            const std::string src = c["template"];
            try {
                const std::string got =
                    Template::parse(src, "snippet").render(variables, fixed_clock());
                if (got != c["output"].get<std::string>()) {
                    failures << QString("%1\n   got  %2\n   want %3")
                                    .arg(shown(src), shown(got),
                                         shown(c["output"].get<std::string>()));
                }
            } catch (const Error& e) {
                failures << QString("%1\n   error %2").arg(shown(src), e.what());
            }
        }
        for (const QString& f : failures) qWarning("%s", qPrintable(f));
        QCOMPARE(failures.size(), 0);
    }

    void expressionErrors() {
        const json doc = read_json(kChat + "expressions.json");
        const Value variables = wb::chat::jinja::from_json(doc["variables"]);
        for (const json& c : doc["errors"]) {
            const std::string src = c["template"];
            const std::string type = c["error_type"];
            try {
                const std::string got =
                    Template::parse(src, "snippet").render(variables, fixed_clock());
                QFAIL(qPrintable(
                    QString("no error from %1, rendered '%2'").arg(shown(src), shown(got))));
            } catch (const Error& e) {
                QVERIFY2(e.kind() == kind_of(type),
                         qPrintable(QString("%1: %2, Jinja2 raised %3")
                                        .arg(shown(src), e.what(), QString::fromStdString(type))));
                if (type == "TemplateError" || type == "UndefinedError" ||
                    type == "SecurityError") {
                    QCOMPARE(e.message(), c["error"].get<std::string>());
                }
            }
        }
    }

    void renderings_data() {
        QTest::addColumn<QString>("file");
        const QStringList files = QDir(QString::fromStdString(kChat + "expected"))
                                      .entryList({"*.json"}, QDir::Files, QDir::Name);
        QCOMPARE(files.size(), 58);
        for (const QString& f : files)
            QTest::newRow(qPrintable(QFileInfo(f).completeBaseName())) << f;
    }

    // Every template x 4 conversations x generation prompt on/off, exactly
    // as Jinja2 renders them (or the same error).
    void renderings() {
        QFETCH(QString, file);
        const json doc = read_json(kChat + "expected/" + file.toStdString());
        const std::string tfile = doc["template_file"];
        const std::string source = read_file(kChat + "templates/" + tfile);
        const auto unsupported = kUnsupported.find(tfile);
        Template t;
        try {
            t = Template::parse(source, tfile);
        } catch (const Error& e) {
            if (doc.contains("syntax_error") || unsupported != kUnsupported.end()) return;
            QFAIL(e.what());
        }
        QVERIFY2(!doc.contains("syntax_error"), "Jinja2 could not parse this template but we did");
        const std::string bos = doc["bos_token"], eos = doc["eos_token"];
        QStringList failures;
        for (const json& c : doc["cases"]) {
            const json& messages = doc["conversations"][c["conversation"].get<std::string>()];
            const bool agp = c["add_generation_prompt"];
            const QString label =
                QString("%1 agp=%2").arg(QString::fromStdString(c["conversation"])).arg(agp);
            try {
                const std::string got = t.render(vars(messages, agp, bos, eos), fixed_clock());
                if (c.contains("error")) {
                    failures << label + ": rendered, but Jinja2 raised " +
                                    QString::fromStdString(c["error"]);
                } else if (got != c["output"].get<std::string>()) {
                    const std::string want = c["output"];
                    size_t at = 0;
                    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
                    failures << QString("%1: differs at byte %2\n   got  ...%3\n   want ...%4")
                                    .arg(label)
                                    .arg(at)
                                    .arg(shown(got.substr(at > 40 ? at - 40 : 0, 120)),
                                         shown(want.substr(at > 40 ? at - 40 : 0, 120)));
                }
            } catch (const Error& e) {
                if (!c.contains("error")) {
                    failures << label + ": " + e.what();
                } else if (e.kind() != kind_of(c["error_type"])) {
                    failures << label + ": " + e.what() + " but Jinja2 raised " +
                                    QString::fromStdString(c["error"]);
                }
            }
        }
        if (unsupported != kUnsupported.end()) {
            QVERIFY2(!failures.isEmpty(),
                     "listed as unsupported but renders exactly: remove it from the list");
            QSKIP(qPrintable("unsupported: " + QString::fromStdString(unsupported->second)));
        }
        for (const QString& f : failures.mid(0, 6)) qWarning("%s", qPrintable(f));
        QCOMPARE(failures.size(), 0);
    }

    // Bad templates give an Error naming the construct and its line, never a
    // crash or a hang.
    void badTemplates_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        const int syntax = static_cast<int>(Error::Kind::Syntax);
        QTest::newRow("unclosed for") << "a\n{% for m in messages %}\n{{ m }}\n"
                                      << syntax << 2 << "'for' opened here is never closed";
        QTest::newRow("missing operand")
            << "x\ny\n{{ 1 + }}" << syntax << 3 << "where a value was expected";
        QTest::newRow("unknown filter")
            << "x\n{{ messages | from_json }}" << syntax << 2 << "unknown filter 'from_json'";
        QTest::newRow("unknown test")
            << "{{ x is shiny }}" << syntax << 1 << "unknown test 'shiny'";
        QTest::newRow("unknown tag")
            << "\n\n{% include 'other.jinja' %}" << syntax << 3 << "unsupported tag 'include'";
        QTest::newRow("stray endif")
            << "{% endif %}" << syntax << 1 << "'endif' without a matching opening tag";
        QTest::newRow("unclosed tag")
            << "ok\n{{ messages" << syntax << 2 << "never closed with '}}'";
        QTest::newRow("unclosed string")
            << "{{ 'abc }}" << syntax << 1 << "string literal is never closed";
        QTest::newRow("unclosed comment") << "{# note" << syntax << 1 << "never closed with '#}'";
        QTest::newRow("break outside loop")
            << "{% break %}" << syntax << 1 << "'break' outside of a for loop";
        QTest::newRow("deep nesting")
            << "{{ " + QString(3000, '(') + " }}" << syntax << 1 << "nests deeper than";
        QTest::newRow("raise_exception")
            << "{% if messages[0].role == 'user' %}\n{{ raise_exception('Only system first') }}{% "
               "endif %}"
            << static_cast<int>(Error::Kind::Raised) << 2 << "Only system first";
        QTest::newRow("infinite recursion")
            << "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}"
            << static_cast<int>(Error::Kind::Limit) << 1 << "nest deeper than";
        QTest::newRow("recursive loop")
            << "{% for m in [[1]] recursive %}{{ loop([m]) }}{% endfor %}"
            << static_cast<int>(Error::Kind::Limit) << 1 << "nests deeper than";
        QTest::newRow("huge range") << "{% for i in range(10000000) %}{% endfor %}"
                                    << static_cast<int>(Error::Kind::Limit) << 1 << "Range too big";
        QTest::newRow("endless work")
            << "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
            << static_cast<int>(Error::Kind::Limit) << 1 << "steps";
        QTest::newRow("huge output") << "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}"
                                     << static_cast<int>(Error::Kind::Limit) << 1 << "bytes";
        QTest::newRow("undefined attribute")
            << "\n{{ nothing.here }}" << static_cast<int>(Error::Kind::Undefined) << 2
            << "'nothing' is undefined";
        QTest::newRow("mutation") << "{% set l = [] %}{{ l.append(1) }}"
                                  << static_cast<int>(Error::Kind::Security) << 1
                                  << "access to attribute 'append' of 'list' object is unsafe.";
        // Found by fuzzing (a mutated Llama 3.2 template): Jinja2 builds a
        // slice object here; without slice values it must be refused, not
        // evaluated with nothing to slice.
        QTest::newRow("slice in a tuple subscript")
            << "{%- set messages = messages[1,:] %}" << syntax << 1
            << "a slice inside a tuple subscript ('[a, b:c]') is not supported";
        QTest::newRow("type error") << "{{ 'a' - 1 }}" << static_cast<int>(Error::Kind::Type) << 1
                                    << "unsupported operand type(s) for -: 'str' and 'int'";
    }

    void badTemplates() {
        QFETCH(QString, source);
        QFETCH(int, kind);
        QFETCH(int, line);
        QFETCH(QString, message);
        RenderOptions o = fixed_clock();
        o.limits.max_steps = 1'000'000;
        o.limits.max_time =
            std::chrono::minutes(5);  // the step limit, not the clock, must stop "endless work"
        o.limits.max_output_bytes = 1 << 20;
        try {
            const Template t = Template::parse(source.toStdString(), "bad.jinja");
            const std::string out = t.render(
                vars(json::array({{{"role", "user"}, {"content", "hi"}}}), true, "", ""), o);
            QFAIL(qPrintable("rendered without an error: " + QString::fromStdString(out).left(80)));
        } catch (const Error& e) {
            QVERIFY2(static_cast<int>(e.kind()) == kind, e.what());
            QCOMPARE(e.line(), line);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
            QVERIFY2(QString(e.what()).startsWith(QString("bad.jinja:%1: ").arg(line)), e.what());
        }
    }

    void timeLimitStopsRendering() {
        // A step budget too large to reach within the time limit: the clock
        // stops it. (The time taken is not asserted.)
        RenderOptions o = fixed_clock();
        o.limits.max_steps = UINT64_MAX;
        o.limits.max_time = std::chrono::milliseconds(100);
        const Template t = Template::parse(
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
        try {
            t.render(vars(json::array(), false, "", ""), o);
            QFAIL("no time limit");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), Error::Kind::Limit);
            QVERIFY2(QString(e.what()).contains("longer than 100 ms"), e.what());
        }
    }

    void unknownFilterInsideIfFailsOnlyWhenReached() {
        // jinja2 defers the unknown-filter error inside an {% if %} to the
        // moment the filter runs (DeepSeek-V3.2 relies on that).
        const Template t = Template::parse(
            "{% if add_generation_prompt %}\n{{ 'x' | from_json }}{% endif %}ok", "t");
        QCOMPARE(t.render(vars(json::array(), false, "", ""), fixed_clock()), std::string("ok"));
        try {
            t.render(vars(json::array(), true, "", ""), fixed_clock());
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(e.line(), 2);
            QCOMPARE(e.message(), std::string("unknown filter 'from_json'"));
        }
    }

    // The 40 renderings made independently with Jinja2 3.1.6.
    void independentGoldens() {
        const json doc = read_json(kChat + "chat_template_goldens.json");
        const json with_system = doc["messages_with_system"];
        json without = json::array();
        for (const json& m : with_system) {
            if (m["role"] != "system") without.push_back(m);
        }
        int n = 0;
        for (const json& c : doc["cases"]) {
            const json& messages = c["conversation"] == "with_system" ? with_system : without;
            const Template t = Template::parse(
                read_file(kChat + "templates/" + c["template_file"].get<std::string>()),
                c["template_file"]);
            const Value v =
                vars(messages, c["add_generation_prompt"], c["bos_token"], c["eos_token"]);
            if (c.contains("output")) {
                QCOMPARE(t.render(v, fixed_clock()), c["output"].get<std::string>());
            } else {
                try {
                    t.render(v, fixed_clock());
                    QFAIL("expected an error");
                } catch (const Error& e) {
                    QCOMPARE(std::string("TemplateError: ") + e.message(),
                             c["error"].get<std::string>());
                }
            }
            ++n;
        }
        QCOMPARE(n, 40);
    }
};

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
