#include "server/http_status.h"

#include <utility>

namespace wb::server {

namespace {

class StatusRecorder : public core::RequestRecorder {
  public:
    explicit StatusRecorder(std::shared_ptr<core::RequestRecorder> inner)
        : inner_(std::move(inner)) {}

    void request_started(const std::shared_ptr<const core::FinishedRequest>& started) override {
        // Admitted: a stream has sent 200, a plain answer will unless it fails.
        inner_->request_started(with_status(*started, 200));
    }
    void request_text(const std::shared_ptr<const core::FinishedRequest>& started,
                      const std::string& output, int64_t tokens, double now_ms) override {
        inner_->request_text(started, output, tokens, now_ms);  // rows are keyed by ids only
    }
    void request_finished(const std::shared_ptr<const core::FinishedRequest>& result) override {
        inner_->request_finished(with_status(*result, http_status_of(*result)));
    }

  private:
    static std::shared_ptr<const core::FinishedRequest> with_status(const core::FinishedRequest& f,
                                                                    int status) {
        auto copy = std::make_shared<core::FinishedRequest>(f);
        if (!copy->settings.is_object()) copy->settings = nlohmann::json::object();
        copy->settings["http_status"] = status;
        return copy;
    }
    std::shared_ptr<core::RequestRecorder> inner_;
};

}  // namespace

int http_status_of(const core::FinishedRequest& f) {
    if (f.refused) return f.finish_reason == "rejected" ? 429 : 400;
    const bool stream = f.settings.is_object() && f.settings.value("stream", false);
    if (stream) return 200;
    if (f.finish_reason == "error") return 500;
    if (f.finish_reason == "timeout") return 504;
    if (f.finish_reason == "cancelled") return 503;
    return 200;
}

std::shared_ptr<core::RequestRecorder> with_http_status(
    std::shared_ptr<core::RequestRecorder> inner) {
    if (!inner) return nullptr;
    return std::make_shared<StatusRecorder>(std::move(inner));
}

}  // namespace wb::server
