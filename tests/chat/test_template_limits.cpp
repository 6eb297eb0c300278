// A chat template is code from a downloaded model: these tests feed the
// template engine and the JSON reader hostile inputs and check each ends
// in a clear error naming its limit, never a signal. The inputs in
// tests/data/repro/templates-and-limits crashed or exhausted the build
// before the limits (their README says what each did); the deep-input
// family builds every recursive construct of the parser, the values and
// the JSON reader at depths 10^3 to 10^6. Expected texts of templates that
// stay within the limits are Python Jinja2's (python3-jinja2 3.1.2, run
// by hand as transformers sets it up; the commands are beside each case).
// No timing is asserted: the time limit is checked by its error.

#include <QFile>
#include <QtTest>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/json_value.h"
#include "chat/jinja/template.h"
#include "chat/json_input.h"
#include "common/data_dir.h"
#include "common/hostile_templates.h"

using wb::chat::JsonInputError;
using wb::chat::jinja::Error;
using wb::chat::jinja::RenderOptions;
using wb::chat::jinja::RenderStats;
using wb::chat::jinja::Template;
using wb::chat::jinja::Value;
using json = nlohmann::ordered_json;

namespace {

const std::string kRepro = wbtest::data_dir() + "/repro/templates-and-limits/";

std::string read_file(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path);
    const QByteArray b = f.readAll();
    return std::string(b.constData(), static_cast<size_t>(b.size()));
}

Value messages_vars() {
    json vars = json::object();
    vars["messages"] = json::parse(read_file(kRepro + "messages.json"));
    vars["add_generation_prompt"] = true;
    vars["bos_token"] = "";
    vars["eos_token"] = "";
    return wb::chat::jinja::from_json(vars);
}

std::string repeat(const std::string& s, size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (size_t i = 0; i < n; ++i) out += s;
    return out;
}

// Parses and renders `source`; returns the error, failing the test when
// there is none.
Error expect_error(const std::string& source, const RenderOptions& o = {},
                   const std::string& name = "t") {
    try {
        const Template t = Template::parse(source, name);
        t.render(messages_vars(), o);
    } catch (const Error& e) {
        return e;
    }
    throw std::runtime_error("no error for a template of " + std::to_string(source.size()) +
                             " bytes");
}

}  // namespace

class TestTemplateLimits : public QObject {
    Q_OBJECT
  private slots:
    // Each file of the repro set: a Limit error naming what was exceeded,
    // at the line being evaluated, and the render's own byte counter never
    // above its budget.
    void reproTemplatesStopAtTheirLimit_data() { wbtest::add_hostile_template_rows(); }
    void reproTemplatesStopAtTheirLimit() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        RenderStats stats;
        RenderOptions o;
        o.stats = &stats;
        const Error e = expect_error(read_file(kRepro + file.toStdString()), o, "model");
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains(says), e.what());
        QVERIFY2(QString(e.what()).startsWith("model:1: "), e.what());
        QVERIFY2(stats.peak_bytes <= o.limits.max_bytes_held,
                 qPrintable(QString::number(stats.peak_bytes)));
    }

    // The budget is settable, and what the values hold is what counts: a
    // smaller budget stops the doubling sooner, and its peak stays under it.
    void budgetIsSettableAndHeld() {
        RenderStats stats;
        RenderOptions o;
        o.stats = &stats;
        o.limits.max_bytes_held = 1u << 20;
        const Error e = expect_error(read_file(kRepro + "string-doubling.jinja"), o);
        QVERIFY2(QString(e.what()).contains("1 MiB"), e.what());
        QVERIFY(stats.peak_bytes <= (1u << 20));
        QVERIFY(stats.peak_bytes >= (1u << 18));  // it did grow to the budget's order
    }

    // Bytes made and dropped are given back: 40 strings of 4 MB made one
    // after another (160 MB in all) fit a 64 MiB budget. Jinja2 prints
    // "0ok": a {% set %} inside a loop does not leave it
    // (python3 -c "...from_string(<this>).render()"). The time limit is
    // raised so that a slow machine (sanitizers) cannot fail it.
    void bytesFreedAreGivenBack() {
        RenderStats stats;
        RenderOptions o;
        o.stats = &stats;
        o.limits.max_time = std::chrono::minutes(5);
        const Template t = Template::parse(
            "{% for i in range(40) %}{% set s = 'x' * 4000000 %}{% endfor %}{{ s|length }}ok");
        try {
            QCOMPARE(t.render(messages_vars(), o), std::string("0ok"));
        } catch (const Error& e) {
            QFAIL(e.what());
        }
        QVERIFY2(stats.made_bytes >= 160'000'000u, qPrintable(QString::number(stats.made_bytes)));
        QVERIFY2(stats.peak_bytes < 16u << 20, qPrintable(QString::number(stats.peak_bytes)));
    }

    // Jinja2: <Namespace {'a': 1, 'self': <Namespace {...}>}>
    void namespaceHoldingItselfPrintsLikePython() {
        const Template t =
            Template::parse("{% set ns = namespace(a=1) %}{% set ns.self = ns %}{{ ns }}");
        QCOMPARE(t.render(messages_vars()),
                 std::string("<Namespace {'a': 1, 'self': <Namespace {...}>}>"));
    }

    // Jinja2: [[[[1], [1]], [[1], [1]]], [[[1], [1]], [[1], [1]]]]|True
    void sharedSublistsPrintAndCompareLikePython() {
        const Template t = Template::parse(
            "{% set ns = namespace(x=[1]) %}{% for i in range(3) %}{% set ns.x = [ns.x, ns.x] "
            "%}{% endfor %}{{ ns.x }}|{{ ns.x == ns.x }}");
        QCOMPARE(t.render(messages_vars()),
                 std::string("[[[[1], [1]], [[1], [1]]], [[[1], [1]], [[1], [1]]]]|True"));
    }

    // A list holding the same list twice, 60 times over, is 2^60 items
    // when printed: the memory budget stops the text.
    void printingSharedSublistsStopsAtTheBudget() {
        const Error e = expect_error(
            "{% set ns = namespace(x=[1]) %}{% for i in range(60) %}{% set ns.x = [ns.x, ns.x] "
            "%}{% endfor %}{{ ns.x }}");
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains("memory budget"), e.what());
    }

    // Two such lists built apart are equal only after 2^60 comparisons: the
    // clock stops the comparison (read while comparing, not only between
    // template steps).
    void comparingSharedSublistsStopsAtTheTimeLimit() {
        RenderOptions o;
        o.limits.max_time = std::chrono::milliseconds(200);
        const Error e = expect_error(
            "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(60) %}"
            "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
            "{{ ns.a == ns.b }}",
            o);
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains("longer than 200 ms"), e.what());
    }

    // A chain of namespaces (each holding the previous one) is bounded like
    // a chain of lists.
    void namespaceChainsAreBounded() {
        const Error e = expect_error(
            "{% set ns = namespace(x=0) %}{% for i in range(1000) %}"
            "{% set ns.x = namespace(y=ns.x) %}{% endfor %}done");
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains("nests deeper than 512"), e.what());
    }

    void templateTextOverTheSizeLimitIsRefusedBeforeParsing() {
        const std::string big(wb::chat::jinja::kMaxTemplateBytes + 1, 'x');
        const Error e = expect_error(big, {}, "model");
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains("1 MiB"), e.what());
        // At the limit it is plain text and renders as itself.
        const std::string ok(wb::chat::jinja::kMaxTemplateBytes, 'x');
        QCOMPARE(Template::parse(ok).render(messages_vars()).size(), ok.size());
    }

    // Every recursive construct of the parser, at depths 10^3 to 10^6:
    // chains built by loops and nesting built by recursion. Each ends in a
    // Limit or Syntax error (never a signal); 10^6 is over the size limit.
    void deepParserInputs_data() {
        QTest::addColumn<QString>("open");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("close");
        QTest::addColumn<int>("n");
        struct C {
            const char *name, *open, *unit, *close;
        };
        const C cases[] = {
            {"plus", "{{ 1", " + 1", " }}"},
            {"concat", "{{ 'a'", " ~ 'a'", " }}"},
            {"and", "{{ true", " and true", " }}"},
            {"or", "{{ false", " or false", " }}"},
            {"attr", "{{ messages", ".x", " }}"},
            {"subscript", "{{ messages", "[0]", " }}"},
            {"call", "{{ range", "(1)", " }}"},
            {"filter", "{{ 'a'", "|trim", " }}"},
            {"test", "{{ 1", " is number", " }}"},
            {"compare", "{{ 1", " < 2", " }}"},
            {"power", "{{ 1", " ** 1", " }}"},
            {"ifelse", "{{ 1", " if true else 1", " }}"},
            {"not", "{{ ", "not ", "true }}"},
            {"minus", "{{ ", "-", "1 }}"},
            {"parens", "{{ ", "(", "1 }}"},
            {"list", "{{ ", "[", " }}"},
            {"dict", "{{ ", "{'a': ", " }}"},
            {"if-block", "", "{% if true %}", ""},
            {"for-block", "", "{% for x in [1] %}", ""},
            {"macro-block", "", "{% macro m() %}", ""},
        };
        for (const C& c : cases) {
            for (const int n : {1000, 10000, 100000, 1000000}) {
                QTest::newRow(qPrintable(QString("%1-%2").arg(c.name).arg(n)))
                    << c.open << c.unit << c.close << n;
            }
        }
    }
    void deepParserInputs() {
        QFETCH(QString, open);
        QFETCH(QString, unit);
        QFETCH(QString, close);
        QFETCH(int, n);
        const std::string src = open.toStdString() +
                                repeat(unit.toStdString(), static_cast<size_t>(n)) +
                                close.toStdString();
        // A flat chain (a < b < c) is one node and may render; anything
        // else must be refused with a Limit or Syntax error.
        try {
            Template::parse(src, "t").render(messages_vars());
            QVERIFY2(unit == " < 2", "rendered");
        } catch (const Error& e) {
            QVERIFY2(e.kind() == Error::Kind::Limit || e.kind() == Error::Kind::Syntax, e.what());
        }
    }

    // Values nested by loops (lists, dicts, tuples, namespaces), 10^3 to
    // 10^6 levels asked for: each stops at 512 levels.
    void deepValues_data() {
        QTest::addColumn<QString>("wrap");
        QTest::addColumn<int>("n");
        for (const char* w : {"[ns.x]", "{'k': ns.x}", "(ns.x,)", "namespace(v=ns.x)",
                              "[ns.x]|list", "dict(k=ns.x)"}) {
            for (const int n : {1000, 10000, 100000, 1000000})
                QTest::newRow(qPrintable(QString("%1 x%2").arg(w).arg(n))) << w << n;
        }
    }
    void deepValues() {
        QFETCH(QString, wrap);
        QFETCH(int, n);
        // range() stops at 100000 items, so the loop is two loops.
        const int outer = n > 100000 ? n / 100000 : 1;
        const int inner = n > 100000 ? 100000 : n;
        const std::string src = "{% set ns = namespace(x=0) %}{% for i in range(" +
                                std::to_string(outer) + ") %}{% for j in range(" +
                                std::to_string(inner) + ") %}{% set ns.x = " + wrap.toStdString() +
                                " %}{% endfor %}{% endfor %}{{ ns.x }}";
        const Error e = expect_error(src);
        QCOMPARE(e.kind(), Error::Kind::Limit);
        QVERIFY2(QString(e.what()).contains("nests deeper than 512"), e.what());
    }

    // JSON input from 10^3 to 10^6 levels: refused before parsing, naming
    // the line and column of the bracket that opens level 257.
    void deepJsonInput_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("open");
        for (const int n : {1000, 10000, 100000, 1000000}) {
            QTest::newRow(qPrintable(QString("arrays-%1").arg(n))) << n << "[";
            QTest::newRow(qPrintable(QString("objects-%1").arg(n))) << n << "{\"a\":";
        }
    }
    void deepJsonInput() {
        QFETCH(int, n);
        QFETCH(QString, open);
        const std::string text = "\n" + repeat(open.toStdString(), static_cast<size_t>(n));
        try {
            wb::chat::parse_json_input(text, "stdin");
            QFAIL("no error");
        } catch (const JsonInputError& e) {
            QCOMPARE(e.line(), 2);
            QCOMPARE(e.column(), 256 * static_cast<int>(open.size()) + 1);
            QVERIFY2(QString(e.what()).startsWith("stdin: line 2, column "), e.what());
            QVERIFY2(QString(e.what()).contains("deeper than 256"), e.what());
        }
    }

    // The repro file: messages nested ~120k deep on one line. Brackets
    // inside strings do not count.
    void deepMessagesFileIsRefusedWithLineAndColumn() {
        try {
            wb::chat::parse_json_input(read_file(kRepro + "deep-messages-120k.json"), "stdin");
            QFAIL("no error");
        } catch (const JsonInputError& e) {
            QCOMPARE(e.line(), 1);
            QVERIFY2(e.problem().find("deeper than 256") != std::string::npos, e.what());
        }
        const json ok = wb::chat::parse_json_input(
            "[{\"role\": \"user\", \"content\": \"" + repeat("[{", 1000) + "\"}]", "stdin");
        QCOMPARE(ok.size(), size_t{1});
    }

    void invalidJsonNamesLineAndColumn() {
        try {
            wb::chat::parse_json_input("[\n  {\"role\": }\n]", "stdin");
            QFAIL("no error");
        } catch (const JsonInputError& e) {
            QCOMPARE(e.line(), 2);
            QCOMPARE(e.column(), 12);
            QVERIFY2(e.problem().find("not valid JSON") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTemplateLimits)
#include "test_template_limits.moc"
