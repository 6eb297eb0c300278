#include "load/answer_reader.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <nlohmann/json.hpp>

namespace wb::load {
namespace {

using json = nlohmann::json;

// The text a choice adds: delta.content (chat) or text (completions).
std::string choice_text(const json& choice) {
    if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
        if (auto c = d->find("content"); c != d->end() && c->is_string()) return *c;
    }
    if (auto m = choice.find("message"); m != choice.end() && m->is_object()) {
        if (auto c = m->find("content"); c != m->end() && c->is_string()) return *c;
    }
    if (auto c = choice.find("text"); c != choice.end() && c->is_string()) return *c;
    return "";
}

// The message of an object with an "error" member. Anything but a string
// or an object with a string "message" is quoted from the raw text, never
// re-serialized: json::dump recurses, and a server may nest 10^6 deep.
std::string error_message(const json& j, std::string_view raw) {
    const json& e = j.at("error");
    if (e.is_object()) {
        if (auto m = e.find("message"); m != e.end() && m->is_string()) return *m;
    }
    if (e.is_string()) return e.get<std::string>();
    return shorten(raw);
}

}  // namespace

std::string shorten(std::string_view s, size_t n) {
    std::string out(s.substr(0, n));
    for (char& c : out) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    if (s.size() > n) out += "...";
    return out;
}

double steady_now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

AnswerReader::AnswerReader(TokenCounter count, std::function<double()> now_ms)
    : count_(std::move(count)), now_ms_(std::move(now_ms)) {}

void AnswerReader::absorb_common(const json& j) {
    if (auto id = j.find("id"); id != j.end() && id->is_string()) r_.response_id = *id;
    if (auto m = j.find("model"); m != j.end() && m->is_string()) r_.served_model = *m;
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
        if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer()) {
            r_.output_tokens = c->get<int64_t>();
            usage_seen_ = true;
        }
        if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
            r_.prompt_tokens = p->get<int64_t>();
        }
    }
    // Our server's timings extension (server/responses.h timings_json); one
    // level deep, anything but a finite number >= 0 is ignored.
    if (auto t = j.find("timings"); t != j.end() && t->is_object()) {
        const auto ms = [&](const char* key, std::optional<double>& into) {
            const auto v = t->find(key);
            if (v == t->end() || !v->is_number()) return;
            const double x = v->get<double>();
            if (std::isfinite(x) && x >= 0) into = x;
        };
        ms("queue_ms", r_.server_queue_ms);
        ms("ttft_ms", r_.server_ttft_ms);
    }
}

bool AnswerReader::on_event(std::string_view data) {
    ++events_;
    if (data == "[DONE]") {
        done_ = true;
        return true;
    }
    json j = json::parse(data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        failure_ = "invalid SSE at event " + std::to_string(events_) +
                   ": data is not a JSON object: '" + shorten(data) + "'";
        return false;
    }
    if (j.contains("error")) {
        failure_ = "the server sent an error mid-stream (event " + std::to_string(events_) +
                   "): " + error_message(j, data);
        return false;
    }
    absorb_common(j);
    if (auto ch = j.find("choices"); ch != j.end() && ch->is_array() && !ch->empty()) {
        const json& c0 = (*ch)[0];
        if (!c0.is_object()) return true;
        if (auto f = c0.find("finish_reason"); f != c0.end() && f->is_string()) {
            r_.finish_reason = *f;
        }
        const std::string text = choice_text(c0);
        if (!text.empty()) {
            const double now = now_ms_();
            if (!r_.ttft_ms) {
                r_.ttft_ms = now - t0_;
            } else {
                r_.itl_ms.push_back(now - last_content_);
            }
            last_content_ = now;
            ++chunks_;
            r_.output += text;
            if (on_content_) on_content_(text);
        }
    }
    return true;
}

std::string AnswerReader::read_body(std::string_view body) {
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return "the response is neither an SSE stream nor a JSON object: '" + shorten(body) + "'";
    }
    if (j.contains("error")) return "the server answered with an error: " + error_message(j, body);
    absorb_common(j);
    const auto ch = j.find("choices");
    if (ch == j.end() || !ch->is_array() || ch->empty() || !(*ch)[0].is_object()) {
        return "the JSON answer has no choices";
    }
    const json& c0 = (*ch)[0];
    r_.output = choice_text(c0);
    if (on_content_ && !r_.output.empty()) on_content_(r_.output);
    if (auto f = c0.find("finish_reason"); f != c0.end() && f->is_string()) {
        r_.finish_reason = *f;
    }
    chunks_ = r_.output.empty() ? 0 : 1;
    return "";
}

void AnswerReader::finish_counts() {
    if (usage_seen_) {
        r_.output_tokens_source = "usage";
    } else {
        // The tokenizer's count; a counter that fails (a tokenizer's match
        // limit on hostile text) or gives no count falls back to chunks.
        int64_t counted = -1;
        if (count_) {
            try {
                counted = count_(r_.output);
            } catch (const std::exception&) {
                counted = -1;
            }
        }
        r_.output_tokens = counted >= 0 ? counted : chunks_;
        r_.output_tokens_source = counted >= 0 ? "tokenizer" : "chunks";
    }
    if (r_.ttft_ms && r_.e2e_ms && r_.output_tokens > 1) {
        r_.tpot_ms = (*r_.e2e_ms - *r_.ttft_ms) / static_cast<double>(r_.output_tokens - 1);
    }
}

std::string http_error_text(std::string_view body) {
    const json j = json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("error")) return error_message(j, body);
    return shorten(body, 300);
}

}  // namespace wb::load
