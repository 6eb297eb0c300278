#include "desktop/remote_client.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtConcurrent>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "desktop/run_recorder.h"
#include "load/client.h"
#include "tokenizer/vocab.h"

namespace wb::gui {

namespace {

// What was sent, as the row's prompt: the messages as OpenAI JSON (the
// endpoint renders them with its own template, which the client never sees).
std::string sent_prompt(const load::RequestSpec& s) {
    if (s.messages.empty()) return s.prompt;
    nlohmann::json m = nlohmann::json::array();
    for (const load::ChatMessage& msg : s.messages)
        m.push_back({{"role", msg.role}, {"content", msg.content}});
    return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

RequestResult to_result(const RequestSpec& spec, const RemoteTarget& target,
                        const load::RequestSpec& sent, const load::RequestResult& r,
                        qint64 start_utc_ms) {
    RequestResult out;
    out.id = spec.id;
    out.label = spec.label.isEmpty() ? spec.id : spec.label;
    out.run_id = spec.run_id;
    out.prompt = QString::fromStdString(sent.prompt);
    out.output = QString::fromStdString(r.output);
    out.target_url = target.base_url;
    out.served_model = QString::fromStdString(r.served_model);
    out.tokens_source = QString::fromStdString(r.output_tokens_source);
    if (r.ok) {
        out.finish_reason =
            r.finish_reason == "length" ? QStringLiteral("length") : QStringLiteral("stop");
    } else if (r.error == "cancelled") {
        out.finish_reason = QStringLiteral("cancelled");
    } else {
        out.finish_reason = r.timed_out ? QStringLiteral("timeout") : QStringLiteral("error");
        out.error = QString::fromStdString(r.error);
    }
    out.prompt_tokens = static_cast<int>(r.prompt_tokens.value_or(0));
    out.generated_tokens = static_cast<int>(r.output_tokens);
    out.queue_wait_ms = r.server_queue_ms.value_or(0);
    out.ttft_ms = r.ttft_ms.value_or(-1);
    out.tpot_ms = r.tpot_ms.value_or(-1);
    out.e2e_ms = r.e2e_ms.value_or(0);
    if (r.tpot_ms && *r.tpot_ms > 0) out.decode_tps = 1000.0 / *r.tpot_ms;
    out.start_utc_ms = start_utc_ms;
    out.finish_utc_ms = start_utc_ms + static_cast<qint64>(out.e2e_ms);
    out.settings = spec.settings;
    out.itl_ms = r.itl_ms;
    return out;
}

}  // namespace

RemoteClient::RemoteClient(RunRecorder* recorder, QObject* parent)
    : QObject(parent), recorder_(recorder) {
    pool_.setMaxThreadCount(4);
}

RemoteClient::~RemoteClient() {
    cancelAll();
    pool_.waitForDone();
}

bool RemoteClient::submit(const RemoteTarget& target, const QString& api_key,
                          const RequestSpec& spec, QString* error) {
    // A long reply from a slow endpoint is not a stall: the whole request
    // may take 5 minutes (a silent one is stopped by Stop or the app's
    // close at once: RequestSpec::cancel).
    load::Target t = to_load_target(target, api_key, load::Api::Chat, 300);
    try {
        load::check_base_url(t.base_url);
    } catch (const std::invalid_argument& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
    load::RequestSpec s;
    s.prompt = spec.prompt.toStdString();
    for (const chat::Message& m : spec.messages) s.messages.push_back({m.role, m.content});
    s.stop = spec.stop;
    s.max_tokens = spec.settings.max_tokens;
    s.temperature = spec.settings.temperature;
    s.top_p = spec.settings.top_p;
    if (spec.settings.fixed_seed) s.seed = spec.settings.seed;
    s.cancel = std::make_shared<std::atomic<bool>>(false);
    // The pool's threads end before this object does (the destructor waits
    // for them), and a queued call to a destroyed object is dropped: the
    // callbacks may hold `self` as a plain pointer.
    RemoteClient* self = this;
    const QString id = spec.id;
    s.on_content = [self, id](const std::string& piece) {
        const QString text = QString::fromStdString(piece);
        QMetaObject::invokeMethod(
            self, [self, id, text] { emit self->tokenArrived(id, -1, text); },
            Qt::QueuedConnection);
    };
    cancels_[id] = s.cancel;
    // The logged row keeps what was sent; the send itself needs no copy of it.
    load::RequestSpec logged = s;
    logged.prompt = sent_prompt(s);
    logged.on_content = nullptr;
    (void)QtConcurrent::run(&pool_, [self, target, t, s, logged, spec, count = count_]() mutable {
        const qint64 start = QDateTime::currentMSecsSinceEpoch();
        load::RequestResult r;
        if (s.cancel->load()) {
            r.error = "cancelled";  // cancelled while it waited for a thread: never sent
        } else {
            // No model id given: the endpoint's first listed model (vLLM and
            // our server require the field), as `workbench-cli load` does.
            if (t.model.empty()) t.model = load::first_model_id(t);
            r = load::send_request(t, s, load::steady_now_ms(), count);
        }
        const RequestResult out = to_result(spec, target, logged, r, start);
        QMetaObject::invokeMethod(
            self,
            [self, target, model = t.model, logged, r, out] {
                self->cancels_.erase(out.id);
                if (self->recorder_ && out.run_id > 0) {
                    nlohmann::json row = {{"target", target.base_url.toStdString()},
                                          {"model", model},
                                          {"api", "chat"},
                                          {"temperature", out.settings.temperature},
                                          {"top_p", out.settings.top_p}};
                    if (logged.seed) row["seed"] = *logged.seed;
                    self->recorder_->logRemote(out.run_id, out.id, target.base_url.toStdString(),
                                               model, logged, r, std::move(row));
                }
                emit self->requestFinished(out);
            },
            Qt::QueuedConnection);
    });
    return true;
}

void RemoteClient::cancel(const QString& id) {
    if (auto it = cancels_.find(id); it != cancels_.end()) it->second->store(true);
}

void RemoteClient::cancelAll() {
    for (auto& [id, c] : cancels_) c->store(true);
}

void RemoteClient::countTokensWith(std::shared_ptr<const tokenizer::Vocab> vocab) {
    if (!vocab) {
        setTokenCounter({});
        return;
    }
    setTokenCounter([vocab = std::move(vocab)](const std::string& text) {
        return static_cast<int64_t>(vocab->tokenize(text, false, false).size());
    });
}

}  // namespace wb::gui
