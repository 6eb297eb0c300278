// The main window's tabs, in display order (see tabs.h). To add a tab,
// write its widget and add one entry here; give it hooks when it runs
// something that closing must stop or keeps choices across restarts.

#include "ui/tabs.h"

#include <QCoreApplication>
#include <QSettings>

#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "ui/batch_panel.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_tab.h"
#include "ui/history_view.h"
#include "ui/load_tab.h"
#include "ui/model_bar.h"
#include "ui/server_tab.h"
#include "ui/target_picker.h"

namespace wb::ui {

namespace {

QString tr_tabs(const char* text) {
    return QCoreApplication::translate("tabs", text);
}

QWidget* make_chat(const TabContext& c) {
    auto* chat = new ChatView(c.bridge, c.recorder, c.settings);
    chat->setStore(c.store);  // template choice per model, system prompt (saved as they change)
    return chat;
}

// A reply streaming is cancelled (logged as cancelled); the chat's run in
// the run log ends once that last event has arrived.
TabHooks chat_hooks() {
    TabHooks h;
    h.busy = [](QWidget* w) {
        auto* chat = qobject_cast<ChatView*>(w);
        return chat && chat->isStreaming() ? tr_tabs("a reply is being generated") : QString();
    };
    h.stop = [](QWidget* w) {
        if (auto* chat = qobject_cast<ChatView*>(w)) chat->stop();
    };
    h.finish = [](QWidget* w) {
        if (auto* chat = qobject_cast<ChatView*>(w)) chat->endRun();
    };
    return h;
}

QWidget* make_batch(const TabContext& c) {
    auto* batch = new BatchPanel(c.bridge, c.recorder, c.settings);
    batch->targetPicker()->setStore(c.store);
    return batch;
}

// Cancelling submits nothing more, so the run ends (and is marked ended in
// the run log) when the engine delivers its requests' last events.
TabHooks batch_hooks() {
    TabHooks h;
    h.busy = [](QWidget* w) {
        auto* batch = qobject_cast<BatchPanel*>(w);
        if (!batch || !batch->isRunning()) return QString();
        const BatchPanel::Progress p = batch->progress();
        return tr_tabs("batch run, %1 of %2 prompts finished").arg(p.done + p.failed).arg(p.total);
    };
    h.stop = [](QWidget* w) {
        if (auto* batch = qobject_cast<BatchPanel*>(w)) batch->cancel();
    };
    h.save = [](QWidget* w, QSettings& s) {
        auto* batch = qobject_cast<BatchPanel*>(w);
        if (!batch) return;
        s.setValue("concurrency", batch->concurrency());
        s.setValue("max_queue", batch->maxQueue());
        s.setValue("timeout_ms", batch->timeoutMs());
        s.setValue("system_prompt", batch->systemPrompt());
    };
    h.restore = [](QWidget* w, const QSettings& s) {
        auto* batch = qobject_cast<BatchPanel*>(w);
        if (!batch) return;
        if (s.contains("concurrency")) batch->setConcurrency(s.value("concurrency").toInt());
        if (s.contains("max_queue")) batch->setMaxQueue(s.value("max_queue").toInt());
        if (s.contains("timeout_ms")) batch->setTimeoutMs(s.value("timeout_ms").toInt());
        if (s.contains("system_prompt"))
            batch->setSystemPrompt(s.value("system_prompt").toString());
    };
    return h;
}

// The Compare tab's work is the bridge's compare service: its models on
// the device chosen in the model bar, its comparisons in the app's run log.
QWidget* make_compare(const TabContext& c) {
    auto* compare = new compare::CompareTab(c.bridge ? c.bridge->compareService() : nullptr);
    // The user's choice; without one, MainWindow sets the default device
    // once the picker is filled.
    compare->setBackend(c.store->backend().isEmpty() ? QStringLiteral("cpu") : c.store->backend(),
                        c.store->device());
    if (!c.bridge) compare->setRecorder(c.recorder);
    compare->setStore(c.store);  // the endpoints saved under "Send to"
    QObject::connect(
        c.modelBar, &ModelBar::deviceChanged, compare, [compare](const gui::DeviceEntry& d) {
            compare->setBackend(d.backend, d.backend == "cpu" ? QString() : d.selector);
        });
    return compare;
}

// Its work runs on its own threads, outside the engine session: stopping
// cancels it and waits for them (a comparison cut short logs nothing).
TabHooks compare_hooks() {
    TabHooks h;
    h.busy = [](QWidget* w) {
        auto* compare = qobject_cast<compare::CompareTab*>(w);
        return compare && compare->busy() ? tr_tabs("a comparison is running") : QString();
    };
    h.stop = [](QWidget* w) {
        if (auto* compare = qobject_cast<compare::CompareTab*>(w)) compare->stopAndWait();
    };
    h.save = [](QWidget* w, QSettings& s) {
        auto* compare = qobject_cast<compare::CompareTab*>(w);
        if (!compare) return;
        s.setValue("prompt", compare->prompt());
        s.setValue("max_tokens", compare->maxTokens());
        s.setValue("ppl_ctx", compare->perplexityContext());
    };
    h.restore = [](QWidget* w, const QSettings& s) {
        auto* compare = qobject_cast<compare::CompareTab*>(w);
        if (!compare) return;
        if (s.contains("prompt")) compare->setPrompt(s.value("prompt").toString());
        if (s.contains("max_tokens")) compare->setMaxTokens(s.value("max_tokens").toInt());
        if (s.contains("ppl_ctx")) compare->setPerplexityContext(s.value("ppl_ctx").toInt());
    };
    return h;
}

QWidget* make_history(const TabContext&) {
    return new HistoryView;
}

QWidget* make_server(const TabContext& c) {
    return new ServerTab(c.bridge, c.recorder);
}

// A listening server is busy; closing stops it (requests in flight are
// cancelled and logged as such) and waits until its run is ended. The API
// key is never saved.
TabHooks server_hooks() {
    TabHooks h;
    h.busy = [](QWidget* w) {
        auto* server = qobject_cast<ServerTab*>(w);
        if (!server || !server->isServing()) return QString();
        return server->baseUrl().isEmpty()
                   ? tr_tabs("a server is starting")
                   : tr_tabs("a server is listening at %1").arg(server->baseUrl());
    };
    h.stop = [](QWidget* w) {
        if (auto* server = qobject_cast<ServerTab*>(w)) server->stopAndWait();
    };
    h.save = [](QWidget* w, QSettings& s) {
        auto* t = qobject_cast<ServerTab*>(w);
        if (!t) return;
        s.setValue("model", t->modelPath());
        s.setValue("host", t->host());
        s.setValue("port", t->port());
        s.setValue("parallel", t->parallel());
        s.setValue("max_queue", t->maxQueue());
        s.setValue("no_text", t->noText());
        s.setValue("canary", t->canaryEnabled());
        s.setValue("canary_model", t->canaryPath());
        s.setValue("canary_steps", t->canarySteps());
        s.setValue("canary_step_s", t->canaryStepSeconds());
        s.setValue("canary_max_failures", t->canaryMaxFailures());
        s.setValue("canary_shadow", t->canaryShadow());
        const rollout::Limits l = t->canaryLimits();
        s.setValue("canary_min_requests", l.min_requests);
        s.setValue("canary_min_shadow", l.min_shadow);
        s.setValue("canary_max_ttft_ratio", l.max_ttft_p99_ratio);
        s.setValue("canary_max_itl_ratio", l.max_itl_p99_ratio);
        s.setValue("canary_max_error_increase", l.max_error_rate_increase);
        s.setValue("canary_min_agreement", l.min_token_agreement);
        s.setValue("canary_max_kld", l.max_mean_kld);
    };
    h.restore = [](QWidget* w, const QSettings& s) {
        auto* t = qobject_cast<ServerTab*>(w);
        if (!t) return;
        if (s.contains("model")) t->setModelPath(s.value("model").toString());
        if (s.contains("host")) t->setHost(s.value("host").toString());
        if (s.contains("port")) t->setPort(s.value("port").toInt());
        if (s.contains("parallel")) t->setParallel(s.value("parallel").toInt());
        if (s.contains("max_queue")) t->setMaxQueue(s.value("max_queue").toInt());
        if (s.contains("no_text")) t->setNoText(s.value("no_text").toBool());
        if (s.contains("canary")) t->setCanaryEnabled(s.value("canary").toBool());
        if (s.contains("canary_model")) t->setCanaryPath(s.value("canary_model").toString());
        if (s.contains("canary_steps")) t->setCanarySteps(s.value("canary_steps").toString());
        if (s.contains("canary_step_s"))
            t->setCanaryStepSeconds(s.value("canary_step_s").toDouble());
        if (s.contains("canary_max_failures"))
            t->setCanaryMaxFailures(s.value("canary_max_failures").toInt());
        if (s.contains("canary_shadow")) t->setCanaryShadow(s.value("canary_shadow").toDouble());
        rollout::Limits l = t->canaryLimits();
        l.min_requests = s.value("canary_min_requests", l.min_requests).toUInt();
        l.min_shadow = s.value("canary_min_shadow", l.min_shadow).toUInt();
        l.max_ttft_p99_ratio = s.value("canary_max_ttft_ratio", l.max_ttft_p99_ratio).toDouble();
        l.max_itl_p99_ratio = s.value("canary_max_itl_ratio", l.max_itl_p99_ratio).toDouble();
        l.max_error_rate_increase =
            s.value("canary_max_error_increase", l.max_error_rate_increase).toDouble();
        l.min_token_agreement = s.value("canary_min_agreement", l.min_token_agreement).toDouble();
        l.max_mean_kld = s.value("canary_max_kld", l.max_mean_kld).toDouble();
        t->setCanaryLimits(l);
    };
    return h;
}

QWidget* make_load(const TabContext& c) {
    return new LoadTab(c.recorder);
}

// A running test is busy; closing stops it (no request sent after that;
// those in flight end and are logged) and waits for its worker. The API
// key's value is never saved, only the variable's name.
TabHooks load_hooks() {
    TabHooks h;
    h.busy = [](QWidget* w) {
        auto* t = qobject_cast<LoadTab*>(w);
        if (!t || !t->isRunning()) return QString();
        const QString p = t->progressText();
        return p.isEmpty() ? tr_tabs("a load test is starting") : tr_tabs("load test, %1").arg(p);
    };
    h.stop = [](QWidget* w) {
        if (auto* t = qobject_cast<LoadTab*>(w)) t->stopAndWait();
    };
    h.save = [](QWidget* w, QSettings& s) {
        if (auto* t = qobject_cast<LoadTab*>(w)) t->saveSettings(s);
    };
    h.restore = [](QWidget* w, const QSettings& s) {
        if (auto* t = qobject_cast<LoadTab*>(w)) t->restoreSettings(s);
    };
    return h;
}

}  // namespace

const std::vector<TabSpec>& tab_specs() {
    // clang-format off
    static const std::vector<TabSpec> specs = {
        {"chat", QT_TRANSLATE_NOOP("tabs", "Chat"), QKeySequence(Qt::CTRL | Qt::Key_1), &make_chat, chat_hooks()},
        {"batch", QT_TRANSLATE_NOOP("tabs", "Batch"), QKeySequence(Qt::CTRL | Qt::Key_2), &make_batch, batch_hooks()},
        {"compare", QT_TRANSLATE_NOOP("tabs", "Compare"), QKeySequence(Qt::CTRL | Qt::Key_3), &make_compare, compare_hooks()},
        {"history", QT_TRANSLATE_NOOP("tabs", "History"), QKeySequence(Qt::CTRL | Qt::Key_4), &make_history},
        {"server", QT_TRANSLATE_NOOP("tabs", "Server"), QKeySequence(Qt::CTRL | Qt::Key_5), &make_server, server_hooks()},
        {"load", QT_TRANSLATE_NOOP("tabs", "Load"), QKeySequence(Qt::CTRL | Qt::Key_6), &make_load, load_hooks()},
    };
    // clang-format on
    return specs;
}

}  // namespace wb::ui
