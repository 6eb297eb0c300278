// Logic of the app's services and widgets on hand-made inputs: prompt-set
// parsing with line numbers, settings persistence through QSettings, error
// classification of real broken GGUF files, the charts' point handling and
// PNG export, the results table's numeric sort. No engine.

#include <qcustomplot.h>

#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QJsonObject>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>
#include <vector>

#include "common/data_dir.h"
#include "common/gguf_bytes.h"
#include "desktop/memory_plan_text.h"
#include "desktop/model_info.h"
#include "desktop/prompt_set.h"
#include "desktop/settings_store.h"
#include "desktop/units_text.h"
#include "desktop/user_error.h"
#include "errors/errors.h"
#include "exec/vk/error.h"
#include "gguf/gguf.h"
#include "ui/batch_results_model.h"
#include "ui/live_charts.h"
#include "ui/settings_panel.h"

using namespace wb;

class UiParts : public QObject {
    Q_OBJECT
  private slots:
    void promptSetJsonl();
    void promptSetPlainText();
    void promptSetUnreadable();
    void settingsPersist();
    void seedsRandomUnlessFixed();
    void recentModels();
    void corruptFileError();
    void missingFileError();
    void unsupportedArchError();
    void unsupportedOptionError();
    void vulkanAndMemoryErrors();
    void modelInfoOfDefaultModel();
    void chartsTakePointsAndExport();
    void memoryNoteNamesHostMemoryOnCpu();
    void chartsThisRunWindowFitsLastRun();
    void chartsBatchStartsItsOwnRun();
    void chartsKeepRunAfterReload();
    void chartsWindowSwitchRecomputesSeries();
    void chartsModelLoadIsMarkedAndRestartsFigures();
    void chartLegendsDoNotOverlap();
    void chartsHoverReadout();
    void resultsSortNumerically();
    void memoryPlanIsReadable();
};

void UiParts::promptSetJsonl() {
    const QByteArray text =
        "{\"prompt\": \"Once upon a time\", \"id\": \"a\", \"max_tokens\": 8}\n"
        "\n"
        "{\"prompt\": \"no id here\"}\r\n"
        "{\"prompt\": \"bad json\n"
        "{\"id\": 3}\n"
        "{\"prompt\": \"\"}\n"
        "{\"prompt\": \"x\", \"max_tokens\": 0}\n"
        "{\"prompt\": \"y\", \"max_tokens\": 2.5}\n"
        "[1, 2]\n"
        "{\"prompt\": \"héllo \\\"quoted\\\"\", \"id\": 17}\n";
    const gui::PromptSet s = gui::PromptSet::parse(text, "t.jsonl");
    QVERIFY(s.jsonl);
    QCOMPARE(s.items.size(), 3);
    QCOMPARE(s.items[0].id, QString("a"));
    QCOMPARE(s.items[0].prompt, QString("Once upon a time"));
    QCOMPARE(s.items[0].max_tokens, 8);
    QCOMPARE(s.items[0].line, 1);
    QCOMPARE(s.items[1].id, QString("line-3"));  // default id from the line number
    QCOMPARE(s.items[1].max_tokens, 0);
    QCOMPARE(s.items[2].id, QString("17"));
    QCOMPARE(s.items[2].prompt, QString::fromUtf8("héllo \"quoted\""));
    // Every malformed line is reported with its 1-based number.
    QList<int> lines;
    for (const gui::PromptLineError& e : s.errors) lines << e.line;
    QCOMPARE(lines, (QList<int>{4, 5, 6, 7, 8, 9}));
    // The messages of the one parser (core/prompt_file.h), as the CLI prints them.
    QVERIFY(s.errors[0].message.startsWith("not valid JSON"));
    QCOMPARE(s.errors[1].message, QString("\"prompt\" is missing"));
    QCOMPARE(s.errors[2].message, QString("\"prompt\" is empty"));
    QVERIFY(s.errors[3].message.contains("max_tokens"));
    QVERIFY(s.errors[4].message.contains("max_tokens"));
    QVERIFY(s.errors[5].message.contains("object"));
}

void UiParts::promptSetPlainText() {
    const gui::PromptSet s =
        gui::PromptSet::parse("first prompt\n\n  second, with {braces}\nthird\n");
    QVERIFY(!s.jsonl);
    QCOMPARE(s.items.size(), 3);
    QCOMPARE(s.items[1].prompt, QString("  second, with {braces}"));
    QCOMPARE(s.items[1].id, QString("line-3"));
    QVERIFY(s.errors.isEmpty());
}

void UiParts::promptSetUnreadable() {
    const gui::PromptSet s = gui::PromptSet::load("/nonexistent/prompts.jsonl");
    QCOMPARE(s.items.size(), 0);
    QCOMPARE(s.errors.size(), 1);
    QVERIFY(s.errors[0].message.contains("/nonexistent/prompts.jsonl"));
    // The bundled sample set: 20 prompts, no malformed line.
    const gui::PromptSet sample = gui::PromptSet::load(":/prompts/stories20.jsonl");
    QCOMPARE(sample.items.size(), 20);
    QVERIFY(sample.errors.isEmpty());
}

void UiParts::settingsPersist() {
    QTemporaryDir dir;
    const QString ini = dir.filePath("s.ini");
    gui::GenSettings s;
    s.temperature = 0;
    s.top_k = 7;
    s.top_p = 0.5;
    s.min_p = 0.25;
    s.repeat_penalty = 1.3;
    s.seed = 18446744073709551615ull;  // 2^64 - 1 must survive JSON
    s.fixed_seed = true;
    s.max_tokens = 33;
    s.n_ctx = 4096;
    s.n_parallel = 9;
    {
        gui::SettingsStore st(ini);
        QVERIFY(st.firstStart());
        st.setGen(s);
        st.setBackend("cpu");
        st.setWindow("geo", "state");
        st.setStarted();
        st.sync();
    }
    gui::SettingsStore again(ini);
    QCOMPARE(again.gen(), s);
    QCOMPARE(again.backend(), QString("cpu"));
    QCOMPARE(again.windowGeometry(), QByteArray("geo"));
    QVERIFY(!again.firstStart());
    // Unknown store: defaults.
    gui::SettingsStore fresh(dir.filePath("fresh.ini"));
    QCOMPARE(fresh.gen(), gui::GenSettings{});
    QCOMPARE(fresh.backend(), QString());  // nothing chosen: the default follows the hardware
}

void UiParts::seedsRandomUnlessFixed() {
    // Default: every request draws its own seed (a repeat of the same
    // 32-bit draw has odds 2^-32 per pair; three equal ones mean no draw).
    gui::GenSettings s;
    QVERIFY(!s.fixed_seed);
    const quint64 a = s.forRequest().seed, b = s.forRequest().seed, c = s.forRequest().seed;
    QVERIFY2(!(a == b && b == c), qPrintable(QString("%1 %2 %3").arg(a).arg(b).arg(c)));
    QVERIFY(a < (quint64{1} << 32));
    // Fixed: the seed given, except when a new one is asked for (Regenerate).
    s.fixed_seed = true;
    s.seed = 1234;
    QCOMPARE(s.forRequest().seed, quint64{1234});
    const quint64 d = s.forRequest(true).seed, e = s.forRequest(true).seed;
    QVERIFY(!(d == 1234 && e == 1234));
    // Everything else is copied unchanged.
    gui::GenSettings r = s.forRequest(true);
    r.seed = s.seed;
    QCOMPARE(r, s);
    // The panel: the seed field is editable only when "fixed" is checked.
    ui::SettingsPanel panel;
    QVERIFY(!panel.settings().fixed_seed);
    auto* fixed = panel.findChild<QCheckBox*>("fixedSeed");
    QVERIFY(fixed);
    auto* seedEdit = panel.findChild<QLineEdit*>();
    QVERIFY(seedEdit && !seedEdit->isEnabled());
    fixed->setChecked(true);
    QVERIFY(panel.settings().fixed_seed);
    QVERIFY(seedEdit->isEnabled());
    // JSON round trip keeps the choice; older settings without it are random.
    QCOMPARE(gui::GenSettings::fromJson(s.toJson()).fixed_seed, true);
    QJsonObject old = s.toJson();
    old.remove("fixed_seed");
    QCOMPARE(gui::GenSettings::fromJson(old).fixed_seed, false);
}

void UiParts::recentModels() {
    QTemporaryDir dir;
    gui::SettingsStore st(dir.filePath("s.ini"));
    for (int i = 0; i < 10; ++i) st.addRecentModel(QString("/m/%1.gguf").arg(i));
    st.addRecentModel("/m/5.gguf");  // moves to the front, no duplicate
    const QStringList r = st.recentModels();
    QCOMPARE(r.size(), gui::SettingsStore::kMaxRecent);
    QCOMPARE(r.first(), QString("/m/5.gguf"));
    QCOMPARE(r.count("/m/5.gguf"), 1);
    QCOMPARE(r[1], QString("/m/9.gguf"));
    st.removeRecentModel("/m/5.gguf");
    QCOMPARE(st.recentModels().first(), QString("/m/9.gguf"));
}

void UiParts::corruptFileError() {
    // A real GGUF header cut short: the reader's own error, classified.
    QTemporaryDir dir;
    const QString path = dir.filePath("cut.gguf");
    QFile src(QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf");
    QVERIFY(src.open(QIODevice::ReadOnly));
    QFile dst(path);
    QVERIFY(dst.open(QIODevice::WriteOnly));
    dst.write(src.read(5000));  // the header runs to byte 14152
    dst.close();
    try {
        gui::ModelInfo::probe(path);
        QFAIL("a truncated file must not parse");
    } catch (const std::exception& e) {
        const gui::UserError u = gui::classify_error(e, path);
        QCOMPARE(u.kind, gui::UserError::Kind::CorruptFile);
        QVERIFY2(u.where.contains(path), qPrintable(u.where));
        QVERIFY2(u.where.contains("offset"), qPrintable(u.where));
        QVERIFY(!u.action.isEmpty());
    }
}

void UiParts::missingFileError() {
    try {
        gui::ModelInfo::probe("/nonexistent/model.gguf");
        QFAIL("a missing file must throw");
    } catch (const std::exception& e) {
        const gui::UserError u = gui::classify_error(e, "/nonexistent/model.gguf");
        QCOMPARE(u.kind, gui::UserError::Kind::FileNotFound);
        QVERIFY(u.where.contains("/nonexistent/model.gguf"));
    }
}

void UiParts::unsupportedArchError() {
    // The engine's typed error (model/hparams.cpp throws it), not its wording.
    const wb::UnsupportedError e("architecture", "unsupported architecture 'gpt2'");
    const gui::UserError u = gui::classify_error(e, "/m/x.gguf");
    QCOMPARE(u.kind, gui::UserError::Kind::UnsupportedArch);
    QVERIFY(u.where.contains("general.architecture"));
}

void UiParts::unsupportedOptionError() {
    // model/hparams.cpp and model_desc.cpp throw these (feature "architecture
    // option", field naming the key or tensor).
    const wb::UnsupportedError moe(
        "architecture option",
        "/m/x.gguf: metadata key 'llama.expert_count' = 8: mixture of experts is not supported "
        "(supported architectures: gemma2, gemma3, llama, phi3, qwen2, qwen3)",
        "metadata key 'llama.expert_count'");
    const gui::UserError u = gui::classify_error(moe, "/m/x.gguf");
    QCOMPARE(u.kind, gui::UserError::Kind::UnsupportedArch);
    QVERIFY2(u.where.contains("metadata key 'llama.expert_count'"), qPrintable(u.where));
    const wb::UnsupportedError extra(
        "architecture option",
        "/m/x.gguf: offset 64: tensor 'blk.0.attn_q.bias': not part of architecture llama as this "
        "engine implements it",
        "tensor 'blk.0.attn_q.bias'");
    const gui::UserError t = gui::classify_error(extra, "/m/x.gguf");
    QCOMPARE(t.kind, gui::UserError::Kind::UnsupportedArch);
    QVERIFY2(t.where.contains("tensor 'blk.0.attn_q.bias'"), qPrintable(t.where));
}

void UiParts::vulkanAndMemoryErrors() {
    const wb::vk::Error novk(
        "vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver; try `apt-get install "
        "mesa-vulkan-drivers`)",
        VK_ERROR_INCOMPATIBLE_DRIVER);
    QCOMPARE(gui::classify_error(novk, "m.gguf").kind, gui::UserError::Kind::NoVulkanDevice);
    const wb::OutOfMemoryError big(
        "model needs 9000000000 bytes (weights 8 GB + KV cache 1 GB) but device X has 4000000000 "
        "bytes available");
    // The Vulkan model's error when the weights and KV cache do not fit.
    const gui::UserError u = gui::classify_error(big, "m.gguf");
    QCOMPARE(u.kind, gui::UserError::Kind::ModelTooLarge);
    // A device error that is a lack of memory is told as one.
    const wb::vk::Error oom("vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY",
                            VK_ERROR_OUT_OF_DEVICE_MEMORY);
    QCOMPARE(gui::classify_error(oom, "m.gguf").kind, gui::UserError::Kind::ModelTooLarge);
    // Untyped errors are not guessed from their wording.
    const std::runtime_error words("vulkan: model needs 9 bytes but device has 4 bytes available");
    QCOMPARE(gui::classify_error(words, "m.gguf").kind, gui::UserError::Kind::Other);
}

void UiParts::modelInfoOfDefaultModel() {
    // Facts from tests/data/models/MANIFEST.md (written by an independent parser).
    const gui::ModelInfo m = gui::ModelInfo::probe(QString::fromStdString(wbtest::data_dir()) +
                                                   "/models/stories260K.gguf");
    QCOMPARE(m.arch, QString("llama"));
    QCOMPARE(m.n_params, qint64(292800));
    QCOMPARE(m.file_bytes, qint64(1185376));
    // general.file_type 0 (ALL_F32); 48 F32 tensors: 32 bits per weight.
    QCOMPARE(m.quantization, QString("F32, 32.00 bpw"));
    QCOMPARE(m.tensor_types, QString("F32 x48"));
    QCOMPARE(m.n_ctx_train, 2048);
    // general.name is "llama", the architecture: said once, not "llama · llama".
    QCOMPARE(m.summary(), QString("llama · F32, 32.00 bpw · 293K params"));
    QCOMPARE(m.fileName(), QString("stories260K.gguf"));
    gui::ModelInfo named = m;
    named.name = "TinyStories 260K";
    QCOMPARE(named.summary(), QString("TinyStories 260K · llama · F32, 32.00 bpw · 293K params"));
    QVERIFY(!m.has_chat_template);
    // phi-3's vocab file carries a chat template.
    const gui::ModelInfo phi = gui::ModelInfo::probe(QString::fromStdString(wbtest::data_dir()) +
                                                     "/models/vocab/ggml-vocab-phi-3.gguf");
    QVERIFY(phi.has_chat_template);
    // llama-quantize's Q4_K_M of golden2's llama-spm (quant_files.json: file
    // type 15; 13 Q4_K, 3 Q6_K, 5 F32 tensors, 1673984 data bytes for
    // 2622720 weights = 5.106 bits per weight).
    const gui::ModelInfo q = gui::ModelInfo::probe(QString::fromStdString(wbtest::data_dir()) +
                                                   "/golden2/llama-spm/llama-spm-q4_k_m.gguf");
    QCOMPARE(q.quantization, QString("Q4_K_M, 5.11 bpw"));
    QCOMPARE(q.tensor_types, QString("Q4_K x13, F32 x5, Q6_K x3"));
    QVERIFY(q.summary().contains(QStringLiteral("Q4_K_M, 5.11 bpw")));
}

// On the CPU backend the memory note speaks of host memory, not of a
// Vulkan extension; on a device without a budget it names the extension.
void UiParts::memoryNoteNamesHostMemoryOnCpu() {
    ui::LiveCharts charts;
    gui::LiveSnapshot s;
    s.memory.weights = 1 << 20;
    s.memory.host = true;
    charts.addSnapshot(s);
    QVERIFY2(charts.memoryNote().contains("host memory"), qPrintable(charts.memoryNote()));
    QVERIFY2(!charts.memoryNote().contains("VK_EXT"), qPrintable(charts.memoryNote()));
    s.t_s = 0.1;
    s.memory.host = false;
    charts.addSnapshot(s);
    QVERIFY2(charts.memoryNote().contains("VK_EXT_memory_budget"), qPrintable(charts.memoryNote()));
}

void UiParts::chartsTakePointsAndExport() {
    ui::LiveCharts charts;
    charts.resize(600, 800);
    charts.setWindowSeconds(60);
    for (int i = 0; i < 50; ++i) {
        gui::LiveSnapshot s;
        s.t_s = i * 0.1;
        s.memory.weights = 1 << 20;
        s.memory.kv_cache = 2 << 20;
        if (i >= 10) s.ttft_events.push_back({s.t_s, 5.0 + i});  // one request per sample
        s.decode_tps = 100.0 * i;
        s.running = i % 4;
        s.queued = 0;
        charts.addSnapshot(s);
    }
    QCOMPARE(charts.pointCount(), 50);
    QCOMPARE(charts.busyPointCount(), 50 - 13);  // i % 4 == 0 is idle: 13 of 50
    // Memory is stacked: the KV line sits on top of the weights (MiB).
    QCPGraph* kv = charts.plot(ui::LiveCharts::Memory)->graph(1);
    QCOMPARE(kv->data()->size(), 50);
    QCOMPARE(kv->data()->at(0)->value, 3.0);
    // "No samples yet" is a gap (NaN), not a zero.
    QVERIFY(std::isnan(charts.plot(ui::LiveCharts::Latency)->graph(0)->data()->at(0)->value));
    // At sample 20 the last minute holds TTFTs 15 .. 25 ms: median 20.
    QCOMPARE(charts.plot(ui::LiveCharts::Latency)->graph(0)->data()->at(20)->value, 20.0);
    QTemporaryDir dir;
    const QString png = dir.filePath("lat.png");
    QVERIFY(charts.exportPng(ui::LiveCharts::Latency, png, 400, 200));
    const QImage img(png);
    QCOMPARE(img.size(), QSize(400, 200));
    charts.clear();
    QCOMPARE(charts.pointCount(), 0);
}

namespace {

// A snapshot at t_s with `running` requests and a decode rate.
gui::LiveSnapshot snap(double t_s, int running, double tps = 0) {
    gui::LiveSnapshot s;
    s.t_s = t_s;
    s.running = running;
    s.decode_tps = tps;
    s.memory.weights = 1 << 20;
    return s;
}

}  // namespace

// The screenshot of a batch started while a chat turn was still busy
// merged into the chat's run, so the prefix-cache chart ("this run") counted
// the chat turn's cached prompt while the batch summary said 0 of 205.
// Starting a batch begins a run of its own; the title names the scope.
void UiParts::chartsBatchStartsItsOwnRun() {
    ui::LiveCharts charts;
    QCOMPARE(charts.windowSeconds(), ui::LiveCharts::kThisRun);
    QVERIFY2(charts.prefixCacheTitle().contains("this run") &&
                 charts.prefixCacheTitle().contains("all requests"),
             qPrintable(charts.prefixCacheTitle()));
    // A chat turn busy 1.0 .. 2.0 s, the batch's Run pressed at 2.0 s with
    // no idle sample in between, busy to 5.0 s.
    for (int i = 0; i <= 20; ++i) charts.addSnapshot(snap(i * 0.1, i >= 10 ? 1 : 0));
    charts.beginRun();
    // The next snapshot's statistics reach back to the Run, not to the chat.
    QVERIFY2(charts.statsWindowSeconds() < 0.35,
             qPrintable(QString::number(charts.statsWindowSeconds())));
    for (int i = 21; i <= 50; ++i) {
        gui::LiveSnapshot s = snap(i * 0.1, 4);
        s.prefix_hit_rate = 0;  // the batch's prompts share nothing
        charts.addSnapshot(s);
    }
    // A rate of 0 is drawn above the axis line, not on it (it read as no data).
    QVERIFY(charts.plot(ui::LiveCharts::PrefixCache)->yAxis->range().lower < 0);
    QCOMPARE(charts.plot(ui::LiveCharts::PrefixCache)->yAxis->range().upper, 1.05);
    QCOMPARE(charts.lastRun().first, 2.0);
    QVERIFY(std::abs(charts.statsWindowSeconds() - 3.2) < 1e-6);
    charts.setWindowSeconds(60);
    QCOMPARE(charts.prefixCacheTitle(),
             QString("Prefix cache hit rate, last 1 min (all requests)"));
    charts.setWindowSeconds(0);
    QVERIFY(charts.prefixCacheTitle().contains("since the model loaded"));
}

void UiParts::chartsThisRunWindowFitsLastRun() {
    ui::LiveCharts charts;
    charts.resize(600, 800);
    // The default window is "This run".
    QCOMPARE(charts.windowSeconds(), ui::LiveCharts::kThisRun);
    // Idle 0..100 s, a 5 s batch from 100 s, idle again until 300 s.
    for (int i = 0; i <= 3000; ++i) {
        const double t = i * 0.1;
        charts.addSnapshot(snap(t, t > 100.05 && t < 105.05 ? 4 : 0, 50));
    }
    // The run is 100.0 (the idle sample before its rise) .. 105.1 (the
    // first idle sample after it).
    QCOMPARE(charts.lastRun().first, 100.0);
    QCOMPARE(charts.lastRun().second, 105.1);
    // The axis fits the run with half a second either side, not 0..300 s.
    const auto r = charts.visibleRange();
    QCOMPARE(r.first, 99.5);
    QCOMPARE(r.second, 105.6);
    // Percentiles cover the run: from its start to now (300 s) and a bit.
    QVERIFY(std::abs(charts.statsWindowSeconds() - 200.2) < 1e-6);
    // The other windows still work: the last minute, everything.
    charts.setWindowSeconds(60);
    QCOMPARE(charts.visibleRange().first, 240.0);
    QCOMPARE(charts.statsWindowSeconds(), 60.0);
    charts.setWindowSeconds(0);
    QCOMPARE(charts.visibleRange().first, 0.0);
    QCOMPARE(charts.visibleRange().second, 300.0);
}

void UiParts::chartsKeepRunAfterReload() {
    ui::LiveCharts charts;
    charts.resize(600, 800);
    for (int i = 0; i <= 50; ++i) charts.addSnapshot(snap(i * 0.1, i >= 10 && i < 30 ? 1 : 0, 80));
    const int before = charts.pointCount();
    // Another model loads: its clock starts again at 0. The earlier points
    // stay and the new ones follow them on the axis, after the load's mark
    // (5.1 s: the last point, 5.0 s, and a tenth).
    for (int i = 0; i < 10; ++i) charts.addSnapshot(snap(i * 0.1, 0));
    QCOMPARE(charts.pointCount(), before + 10);
    QCPGraph* tps = charts.plot(ui::LiveCharts::Throughput)->graph(0);
    QCOMPARE(tps->data()->at(20)->value, 80.0);  // the finished run's samples
    QVERIFY(tps->data()->at(before)->key > 5.0);
    QCOMPARE(charts.modelLoads().size(), size_t{1});
    QVERIFY(std::abs(charts.modelLoads()[0] - 5.1) < 1e-9);
    // "This run" starts at the load; the finished run (0.9 .. 3.0 s) is
    // no longer the one shown.
    QVERIFY(std::abs(charts.lastRun().first - 5.1) < 1e-9);
    QVERIFY(std::abs(charts.visibleRange().first - 4.6) < 1e-9);
    // The next run replaces it.
    const double t0 = tps->data()->at(tps->data()->size() - 1)->key;
    charts.addSnapshot(snap(1.0, 2));
    charts.addSnapshot(snap(1.1, 2));
    QVERIFY(std::abs(charts.lastRun().first - t0) < 1e-9);
    QVERIFY(charts.visibleRange().first > 5.0);
}

namespace {

// Values of graph `g` of chart `c`, one per point.
QVector<double> series(const ui::LiveCharts& charts, ui::LiveCharts::Chart c, int g) {
    QVector<double> out;
    for (const QCPGraphData& d : *charts.plot(c)->graph(g)->data()) out << d.value;
    return out;
}

// Equal within 1e-9, NaN equal to NaN (a gap).
bool same(const QVector<double>& got, const QVector<double>& want) {
    if (got.size() != want.size()) return false;
    for (qsizetype i = 0; i < got.size(); ++i) {
        if (std::isnan(got[i]) != std::isnan(want[i])) return false;
        if (!std::isnan(want[i]) && std::abs(got[i] - want[i]) > 1e-9) return false;
    }
    return true;
}

QString text_of(const QVector<double>& v) {
    QStringList s;
    for (double x : v) s << QString::number(x);
    return s.join(' ');
}

}  // namespace

// Switching the window computed only the points after the
// switch over the new window, so the lines stepped where it changed. Every
// point is computed again from the requests' own samples.
void UiParts::chartsWindowSwitchRecomputesSeries() {
    ui::LiveCharts charts;
    charts.setWindowSeconds(60);
    // A sample every 30 s, 0 .. 600 s; four requests, each carried by the
    // first sample after it: TTFT (ms) and prompt / cached tokens.
    struct Req {
        double t, ttft, prompt, cached;
    };
    const Req reqs[] = {
        {10, 100, 100, 0}, {100, 200, 100, 50}, {250, 300, 200, 200}, {500, 400, 100, 100}};
    for (int i = 0; i <= 20; ++i) {
        gui::LiveSnapshot s = snap(i * 30.0, 1);
        for (const Req& r : reqs) {
            if (r.t > (i - 1) * 30.0 && r.t <= i * 30.0) {
                s.ttft_events.push_back({r.t, r.ttft});
                s.prefix_events.push_back({r.t, r.prompt, r.cached});
            }
        }
        charts.addSnapshot(s);
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Last minute at 120 s: (60, 120] holds the request at 100 s only.
    QCOMPARE(series(charts, ui::LiveCharts::Latency, 0)[4], 200.0);
    QCOMPARE(series(charts, ui::LiveCharts::PrefixCache, 0)[4], 0.5);

    charts.setWindowSeconds(300);
    // By hand, the last 5 min (t - 300, t] at t = 0, 30, ..., 600:
    //   0: none; 30..90: {10}; 120..240: {10, 100}; 270, 300: {10, 100, 250};
    //   330..390: {100, 250}; 420..480: {250}; 510, 540: {250, 500};
    //   570, 600: {500}.
    // TTFT p50 (numpy "linear"): {100} 100, {100, 200} 150, {100, 200, 300}
    // 200, {200, 300} 250, {300} 300, {300, 400} 350, {400} 400.
    const QVector<double> p50{nan, 100, 100, 100, 150, 150, 150, 150, 150, 200, 200,
                              250, 250, 250, 300, 300, 300, 350, 350, 400, 400};
    // p95: {100, 200}: 100 + 0.95 * 100 = 195; {100, 200, 300}: h = 1.9,
    // 200 + 0.9 * 100 = 290; {200, 300}: 295; {300, 400}: 395.
    const QVector<double> p95{nan, 100, 100, 100, 195, 195, 195, 195, 195, 290, 290,
                              295, 295, 295, 300, 300, 300, 395, 395, 400, 400};
    // Cached / prompt tokens: {10} 0/100; {10, 100} 50/200; {10, 100, 250}
    // 250/400; {100, 250} 250/300; {250} 1; {250, 500} 300/300; {500} 1.
    const QVector<double> rate{nan,  0,    0,     0,     0.25,        0.25,        0.25,
                               0.25, 0.25, 0.625, 0.625, 250.0 / 300, 250.0 / 300, 250.0 / 300,
                               1,    1,    1,     1,     1,           1,           1};
    QVERIFY2(same(series(charts, ui::LiveCharts::Latency, 0), p50),
             qPrintable(text_of(series(charts, ui::LiveCharts::Latency, 0))));
    QVERIFY2(same(series(charts, ui::LiveCharts::Latency, 1), p95),
             qPrintable(text_of(series(charts, ui::LiveCharts::Latency, 1))));
    QVERIFY2(same(series(charts, ui::LiveCharts::PrefixCache, 0), rate),
             qPrintable(text_of(series(charts, ui::LiveCharts::PrefixCache, 0))));
    // No e2e sample was given: gaps, not zeros.
    for (double v : series(charts, ui::LiveCharts::Latency, 3)) QVERIFY(std::isnan(v));

    // Since the model loaded (no load marked: since the first sample): at
    // 600 s all four requests, TTFT p50 250, rate 350 / 500.
    charts.setWindowSeconds(0);
    QCOMPARE(series(charts, ui::LiveCharts::Latency, 0).last(), 250.0);
    QCOMPARE(series(charts, ui::LiveCharts::PrefixCache, 0).last(), 0.7);
    // And back: the last minute's value at 120 s again.
    charts.setWindowSeconds(60);
    QCOMPARE(series(charts, ui::LiveCharts::PrefixCache, 0)[4], 0.5);
}

// A model load is marked on the time axis, "This run"
// starts there, and "since the model loaded" counts only the requests after
// the load (it went on counting the previous model's).
void UiParts::chartsModelLoadIsMarkedAndRestartsFigures() {
    ui::LiveCharts charts;
    charts.resize(600, 800);
    charts.markModelLoad("a.gguf");
    QCOMPARE(charts.modelLoads(), std::vector<double>{0.0});
    charts.setWindowSeconds(0);
    // Model a: samples at 0 .. 10 s; requests at 2 s (100 prompt tokens, 0
    // cached, TTFT 40 ms) and 5 s (100, 100 cached, 60 ms).
    for (int i = 0; i <= 10; ++i) {
        gui::LiveSnapshot s = snap(i, 0);
        if (i == 2) {
            s.prefix_events.push_back({2, 100, 0});
            s.ttft_events.push_back({2, 40});
        }
        if (i == 5) {
            s.prefix_events.push_back({5, 100, 100});
            s.ttft_events.push_back({5, 60});
        }
        charts.addSnapshot(s);
    }
    QCOMPARE(series(charts, ui::LiveCharts::PrefixCache, 0).last(), 0.5);
    // Model b loads: marked just after the last point (10 s + 0.1 s).
    charts.markModelLoad("b.gguf");
    QCOMPARE(charts.modelLoads().size(), size_t{2});
    QCOMPARE(charts.modelLoads()[1], 10.1);
    for (int c = 0; c < ui::LiveCharts::kCharts; ++c) {
        QCustomPlot* p = charts.plot(static_cast<ui::LiveCharts::Chart>(c));
        int lines = 0;
        for (int i = 0; i < p->itemCount(); ++i)
            if (auto* line = qobject_cast<QCPItemStraightLine*>(p->item(i))) {
                QCOMPARE(line->point1->coords().x(), line->point2->coords().x());
                if (line->point1->coords().x() == 10.1) ++lines;
            }
        QCOMPARE(lines, 1);
    }
    // Its clock starts at 0 (axis 10.1); one request at 2 s after the load
    // (axis 12.1): 100 prompt tokens, 25 cached, TTFT 90 ms.
    for (int i = 0; i <= 5; ++i) {
        gui::LiveSnapshot s = snap(i, 0);
        if (i == 2) {
            s.prefix_events.push_back({2, 100, 25});
            s.ttft_events.push_back({2, 90});
        }
        charts.addSnapshot(s);
    }
    const QVector<double> rate = series(charts, ui::LiveCharts::PrefixCache, 0);
    const QVector<double> ttft = series(charts, ui::LiveCharts::Latency, 0);
    QCOMPARE(rate.size(), 17);
    // Model a's points keep model a's figures: 0.5 at 10 s.
    QCOMPARE(rate[10], 0.5);
    // At the load and 1 s after it: no request of model b yet, a gap.
    QVERIFY(std::isnan(rate[11]) && std::isnan(rate[12]));
    QVERIFY(std::isnan(ttft[11]));
    // From 2 s after it: model b's request alone, 25 / 100 (not 125 / 300).
    QCOMPARE(rate[13], 0.25);
    QCOMPARE(rate[16], 0.25);
    QCOMPARE(ttft[16], 90.0);
    QVERIFY(charts.prefixCacheTitle().contains("since the model loaded"));
    // "This run" starts at the load (no request queued since): the axis
    // from half a second before it.
    charts.setWindowSeconds(ui::LiveCharts::kThisRun);
    QCOMPARE(charts.lastRun().first, 10.1);
    QCOMPARE(charts.visibleRange().first, 9.6);
    QCOMPARE(series(charts, ui::LiveCharts::PrefixCache, 0)[16], 0.25);
    QVERIFY(std::isnan(series(charts, ui::LiveCharts::PrefixCache, 0)[11]));
}

// Each chart's title fits its width (broken into lines),
// its legend sits in its own row under the axes, and the legend's entries
// stay inside the chart without running over each other (their drawn
// areas): at the narrowest chart (the window's minimum), one beside the tabs
// in a 1366 px window, and a wide one.
void UiParts::chartLegendsDoNotOverlap() {
    ui::LiveCharts charts;
    charts.show();
    QVERIFY(QTest::qWaitForWindowExposed(&charts));
    for (const int width : {170, 330, 700}) {
        charts.resize(width, 900);
        QTest::qWait(20);
        for (int c = 0; c < ui::LiveCharts::kCharts; ++c) {
            QCustomPlot* p = charts.plot(static_cast<ui::LiveCharts::Chart>(c));
            p->replot(QCustomPlot::rpImmediateRefresh);
            const QString where = QString("chart %1 at %2 px").arg(c).arg(p->width());
            const QRect axes = p->axisRect()->outerRect();
            const QRect legend = p->legend->outerRect();
            QVERIFY2(!legend.intersects(axes), qPrintable(where));
            // The title is broken into lines at spaces, each within the chart.
            auto* title = qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
            QVERIFY(title);
            for (const QString& line : title->text().split('\n'))
                QVERIFY2(QFontMetrics(title->font()).horizontalAdvance(line) <= p->width(),
                         qPrintable(where + ": " + line));
            QVERIFY2(legend.top() >= axes.bottom(), qPrintable(where));
            // The entries (itemCount() counts the legend grid's empty cells).
            QList<QCPAbstractLegendItem*> items;
            for (int i = 0; i < p->legend->itemCount(); ++i)
                if (QCPAbstractLegendItem* item = p->legend->item(i)) items << item;
            QCOMPARE(items.size(), p->graphCount());
            for (qsizetype i = 0; i < items.size(); ++i) {
                const QRect a = items[i]->outerRect();
                QVERIFY2(p->rect().contains(a), qPrintable(QString("%1: entry %2 at %3..%4")
                                                               .arg(where)
                                                               .arg(i)
                                                               .arg(a.left())
                                                               .arg(a.right())));
                for (qsizetype j = i + 1; j < items.size(); ++j)
                    QVERIFY2(!items[i]->rect().intersects(items[j]->rect()),
                             qPrintable(QString("%1: entries %2, %3").arg(where).arg(i).arg(j)));
            }
        }
    }
}

void UiParts::chartsHoverReadout() {
    ui::LiveCharts charts;
    charts.resize(600, 800);
    charts.show();
    for (int i = 0; i < 20; ++i) {
        gui::LiveSnapshot s = snap(i * 0.5, 1, 10.0 * i);
        s.memory.kv_cache = 3 << 20;
        s.ttft_events.push_back({s.t_s, 12.5});
        charts.addSnapshot(s);
    }
    // The sample at or before the time asked for, every graph by name.
    QCOMPARE(charts.readout(ui::LiveCharts::Throughput, 3.2),
             QString("t = 3.0 s\ndecode tokens/s: 60.00"));
    const QString mem = charts.readout(ui::LiveCharts::Memory, 9.9);
    QVERIFY2(mem.contains("t = 9.5 s") && mem.contains("weights: 1.00") &&
                 mem.contains("KV cache: 3.00"),  // its own share, not the stack (4)
             qPrintable(mem));
    QVERIFY(charts.readout(ui::LiveCharts::Latency, 5).contains("TTFT p50: 12.50"));
    // Moving the mouse over a chart, no button held, shows it as a tooltip.
    QCustomPlot* p = charts.plot(ui::LiveCharts::Throughput);
    QVERIFY(p->hasMouseTracking());
    const QPoint at(static_cast<int>(p->xAxis->coordToPixel(3.2)), p->height() / 2);
    QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(p->mapToGlobal(at)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(p, &move);
    QVERIFY2(QToolTip::text().contains("decode tokens/s: 60.00"), qPrintable(QToolTip::text()));
}

void UiParts::resultsSortNumerically() {
    ui::BatchResultsModel m;
    for (double ttft : {100.0, 9.0, 25.0}) {
        gui::RequestResult r;
        r.id = QString::number(ttft);
        r.ttft_ms = ttft;
        m.append(r);
    }
    QSortFilterProxyModel p;
    p.setSourceModel(&m);
    p.setSortRole(Qt::UserRole);
    p.sort(ui::BatchResultsModel::Ttft);
    // Numeric order (text order would put "100.0" before "25.0" and "9.0").
    QCOMPARE(p.index(0, 0).data().toString(), QString("9"));
    QCOMPARE(p.index(1, 0).data().toString(), QString("25"));
    QCOMPARE(p.index(2, 0).data().toString(), QString("100"));
}

QTEST_MAIN(UiParts)
void UiParts::memoryPlanIsReadable() {
    // The model bar read "needs 0.00 GiB of 8.00 GiB · max context 1669888"
    // beside "8.0 GiB device memory":
    // a bare count of KV cells, far past the 2,048 tokens the bundled model
    // was trained on, and a size rounded to nothing.
    const QLocale before;
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QCOMPARE(gui::bytes_text(512), QString("512 B"));
    QCOMPARE(gui::bytes_text(1536), QString("1.50 KiB"));
    QCOMPARE(gui::bytes_text(1185376), QString("1.13 MiB"));  // 1185376 / 2^20 = 1.1305
    QCOMPARE(gui::bytes_text(uint64_t{8} << 30), QString("8.00 GiB"));
    QCOMPARE(gui::bytes_text(uint64_t{150} << 20), QString("150 MiB"));
    QCOMPARE(gui::count_text(1669888), QString("1,669,888"));
    QCOMPARE(gui::context_fit_text(1669888, 2048), QString("full 2,048-token context fits"));
    QCOMPARE(gui::context_fit_text(61440, 131072),
             QString("context fits up to 61,440 of 131,072 tokens"));
    QCOMPARE(gui::context_fit_text(1669888, 0), QString("context fits up to 1,669,888 tokens"));
    QVERIFY(gui::context_fit_text(0, 2048).startsWith("no context fits"));
    // The bundled model (1185376 bytes of F32 weights, context_length 2048
    // per tests/data/models/MANIFEST.md) on an 8 GiB device.
    const gui::PlanText p =
        gui::plan_text(QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf", 256,
                       1, qint64{8} << 30, true);
    QVERIFY2(p.text.startsWith("model needs ") && p.text.contains(" MiB · "), qPrintable(p.text));
    QVERIFY2(p.tooltip.contains("The device has 8.00 GiB."), qPrintable(p.tooltip));
    QVERIFY2(p.text.endsWith("full 2,048-token context fits"), qPrintable(p.text));
    QVERIFY2(!p.text.contains(QRegularExpression("\\d{5}")), qPrintable(p.text));
    QVERIFY2(p.tooltip.contains("trained on 2,048 tokens"), qPrintable(p.tooltip));
    QLocale::setDefault(before);
}

#include "test_ui_parts.moc"
