#include "runlog/response_rows.h"

#include <exception>

namespace wb::runlog {

ResponseRows::ResponseRows(RunLog& log, double min_update_ms)
    : log_(log), min_update_ms_(min_update_ms) {}

void ResponseRows::start(const std::string& key, const ResponseRecord& started) {
    std::lock_guard lock(mu_);
    retry_kept();
    Row& row = rows_[key];
    if (row.id > 0) return;  // started again (resumed after preemption): same row
    try {
        row.id = log_.begin_response(started);
    } catch (const std::exception& e) {
        row.id = 0;  // finish() inserts the whole row instead
        error_ = e.what();
    }
}

void ResponseRows::text(const std::string& key, const std::string& output, int64_t tokens,
                        double now_ms) {
    std::lock_guard lock(mu_);
    auto it = rows_.find(key);
    if (it == rows_.end() || it->second.id == 0) return;
    if (now_ms - it->second.last_write < min_update_ms_) return;
    it->second.last_write = now_ms;
    try {
        log_.update_response(it->second.id, output, tokens);
    } catch (const std::exception& e) {
        error_ = e.what();  // the next update or finish() carries the text
    }
}

bool ResponseRows::write_final(int64_t id, const ResponseRecord& r) {
    try {
        if (id > 0)
            log_.finish_response(id, r);
        else
            log_.log_response(r);
        return true;
    } catch (const std::exception& e) {
        error_ = e.what();
        return false;
    }
}

void ResponseRows::retry_kept() {
    while (!kept_.empty()) {
        if (!write_final(kept_.front().id, kept_.front().record)) return;
        kept_.pop_front();
    }
}

void ResponseRows::finish(const std::string& key, const ResponseRecord& r) {
    std::lock_guard lock(mu_);
    int64_t id = 0;
    if (auto it = rows_.find(key); it != rows_.end()) {
        id = it->second.id;
        rows_.erase(it);
    }
    retry_kept();
    if (!kept_.empty() || !write_final(id, r)) kept_.push_back({key, id, r});  // keep the order
}

size_t ResponseRows::flush() {
    std::lock_guard lock(mu_);
    retry_kept();
    if (kept_.empty()) error_.clear();
    return kept_.size();
}

size_t ResponseRows::unlogged() const {
    std::lock_guard lock(mu_);
    return kept_.size();
}

std::string ResponseRows::last_error() const {
    std::lock_guard lock(mu_);
    return error_;
}

std::string ResponseRows::take_new_error() {
    std::lock_guard lock(mu_);
    if (error_.empty() || error_ == reported_) return "";
    reported_ = error_;
    return error_;
}

}  // namespace wb::runlog
