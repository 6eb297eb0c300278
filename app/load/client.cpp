#include "load/client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "load/answer_reader.h"
#include "load/sse.h"

namespace wb::load {
namespace {

using json = nlohmann::json;

// The most of an error body kept for the message (the rest is dropped).
constexpr size_t kMaxErrorBody = 4096;

struct Url {
    std::string scheme_host_port;  // "http://host:port"
    std::string prefix;            // "" or "/something" (no trailing '/')
};

Url parse_url(const std::string& base) {
    // https when cpp-httplib was built with OpenSSL (Debian's is: its
    // pkg-config defines CPPHTTPLIB_OPENSSL_SUPPORT); server certificates
    // are verified against the system's CA store (or --ca-cert).
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    const bool tls_ok = true;
#else
    const bool tls_ok = false;
#endif
    if (base.rfind("https://", 0) == 0 && !tls_ok) {
        throw std::invalid_argument("target '" + base +
                                    "': https is not supported by this build (cpp-httplib without "
                                    "OpenSSL); use an http:// URL or a TLS-terminating proxy");
    }
    const std::string http = base.rfind("https://", 0) == 0 ? "https://" : "http://";
    if (base.rfind(http, 0) != 0 || base.size() == http.size()) {
        throw std::invalid_argument("target '" + base +
                                    "': expected a base URL http[s]://host[:port][/path]");
    }
    const size_t slash = base.find('/', http.size());
    Url u;
    u.scheme_host_port = base.substr(0, slash);
    if (slash != std::string::npos) u.prefix = base.substr(slash);
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
    if (u.prefix.size() >= 3 && u.prefix.compare(u.prefix.size() - 3, 3, "/v1") == 0) {
        u.prefix.resize(u.prefix.size() - 3);
    }
    if (u.scheme_host_port.find_first_of(" \t\r\n?#") != std::string::npos) {
        throw std::invalid_argument("target '" + base + "': the host part has invalid characters");
    }
    return u;
}

std::string seconds(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g s", s);
    return b;
}

std::string body_json(const Target& t, const RequestSpec& spec) {
    json b = json::object();
    if (!t.model.empty()) b["model"] = t.model;
    if (t.api == Api::Chat) {
        if (spec.messages.empty()) {
            b["messages"] = json::array({{{"role", "user"}, {"content", spec.prompt}}});
        } else {
            json m = json::array();
            for (const ChatMessage& msg : spec.messages)
                m.push_back({{"role", msg.role}, {"content", msg.content}});
            b["messages"] = std::move(m);
        }
    } else {
        b["prompt"] = spec.prompt;
    }
    b["max_tokens"] = spec.max_tokens;
    b["stream"] = true;
    b["stream_options"] = {{"include_usage", true}};
    if (!spec.user.empty()) b["user"] = spec.user;
    if (spec.seed) b["seed"] = *spec.seed;
    if (spec.temperature) b["temperature"] = *spec.temperature;
    if (spec.top_p) b["top_p"] = *spec.top_p;
    if (!spec.stop.empty()) b["stop"] = spec.stop;
    // A prompt file's invalid UTF-8 is sent as U+FFFD, not thrown.
    return b.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool is_server_header(const std::string& name) {
    if (name == "server" || name == "x-powered-by") return true;
    if (name.rfind("openai-", 0) == 0) return true;
    return name.rfind("x-", 0) == 0 && name.find("version") != std::string::npos;
}

}  // namespace

GetResult get_path(const Target& target, const std::string& path, size_t max_bytes) {
    const Url url = parse_url(target.base_url);
    httplib::Client cli(url.scheme_host_port);
    cli.set_connection_timeout(static_cast<time_t>(std::ceil(target.connect_timeout_s)));
    cli.set_read_timeout(static_cast<time_t>(std::ceil(target.timeout_s)));
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (!target.ca_cert_path.empty()) cli.set_ca_cert_path(target.ca_cert_path);
    cli.enable_server_certificate_verification(true);
#endif
    httplib::Headers h;
    if (!target.api_key.empty()) h.emplace("Authorization", "Bearer " + target.api_key);
    GetResult out;
    bool too_long = false;
    const httplib::Result res = cli.Get(url.prefix + path, h, [&](const char* data, size_t n) {
        if (out.body.size() + n > max_bytes) {
            too_long = true;
            return false;
        }
        out.body.append(data, n);
        return true;
    });
    if (too_long) {
        out.error =
            "GET " + path + ": the answer is longer than " + std::to_string(max_bytes) + " bytes";
    } else if (!res) {
        out.error = "GET " + path + " failed: " + httplib::to_string(res.error());
    } else {
        out.status = res->status;
    }
    return out;
}

std::optional<std::vector<std::string>> model_ids(const Target& target) {
    const GetResult g = get_path(target, "/v1/models", target.max_line_bytes);
    if (!g.error.empty() || g.status != 200) return std::nullopt;
    const json j = json::parse(g.body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    const auto data = j.find("data");
    if (data == j.end() || !data->is_array()) return std::nullopt;
    std::vector<std::string> ids;
    for (const json& m : *data) {
        if (!m.is_object()) continue;
        const auto id = m.find("id");
        if (id != m.end() && id->is_string()) ids.push_back(id->get<std::string>());
    }
    return ids;
}

std::string first_model_id(const Target& target) {
    const std::optional<std::vector<std::string>> ids = model_ids(target);
    return ids && !ids->empty() ? ids->front() : "";
}

std::string unlisted_model_warning(const Target& target) {
    if (target.model.empty()) return "";
    const std::optional<std::vector<std::string>> ids = model_ids(target);
    if (!ids || ids->empty()) return "";
    if (std::find(ids->begin(), ids->end(), target.model) != ids->end()) return "";
    std::string list;
    for (size_t i = 0; i < ids->size() && i < 8; ++i) list += (i ? ", " : "") + (*ids)[i];
    if (ids->size() > 8) list += ", ... (" + std::to_string(ids->size()) + " in all)";
    return target.base_url + " lists the models " + shorten(list, 400) + "; '" +
           shorten(target.model, 120) +
           "' is not one of them: each request will likely fail (HTTP 404)";
}

void check_base_url(const std::string& base_url) {
    (void)parse_url(base_url);
}

RequestResult send_request(const Target& target, const RequestSpec& spec, double epoch_ms,
                           const TokenCounter& count) {
    const Url url = parse_url(target.base_url);
    AnswerReader rd(count);
    if (spec.on_content) rd.set_on_content(spec.on_content);

    httplib::Client cli(url.scheme_host_port);
    const auto to_timeval = [](double s, auto setter) {
        const double whole = std::floor(s);
        setter(static_cast<time_t>(whole), static_cast<time_t>((s - whole) * 1e6));
    };
    to_timeval(target.connect_timeout_s,
               [&](time_t a, time_t b) { cli.set_connection_timeout(a, b); });
    to_timeval(target.timeout_s, [&](time_t a, time_t b) { cli.set_read_timeout(a, b); });
    to_timeval(target.timeout_s, [&](time_t a, time_t b) { cli.set_write_timeout(a, b); });
    cli.set_keep_alive(false);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (!target.ca_cert_path.empty()) cli.set_ca_cert_path(target.ca_cert_path);
    cli.enable_server_certificate_verification(true);
#endif

    httplib::Request req;
    req.method = "POST";
    req.path = url.prefix + (target.api == Api::Chat ? "/v1/chat/completions" : "/v1/completions");
    req.set_header("Content-Type", "application/json");
    req.set_header("Accept", "text/event-stream");
    if (!target.api_key.empty()) req.set_header("Authorization", "Bearer " + target.api_key);
    req.body = body_json(target, spec);

    SseReader sse(target.max_line_bytes);
    // The most a stream may send: 1 KiB a token (a chunk of JSON with one
    // token's text is 150 to 300 bytes with vLLM's or llama-server's extra
    // fields and a long model id) plus one line's worth.
    const uint64_t max_stream_bytes =
        uint64_t{1024} * static_cast<uint64_t>(std::max(spec.max_tokens, 1)) +
        target.max_line_bytes;
    uint64_t streamed = 0;
    std::string body;  // a non-streamed answer, or an error body
    bool event_stream = false;
    double last_data = 0;
    req.response_handler = [&](const httplib::Response& res) {
        rd.result().http_status = res.status;
        for (const auto& [name, value] : res.headers) {
            std::string lower = name;
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (is_server_header(lower)) rd.result().server_headers[lower] = value;
        }
        event_stream =
            res.get_header_value("Content-Type").find("text/event-stream") != std::string::npos;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        const double now = steady_now_ms();
        last_data = now;
        if (spec.cancel && spec.cancel->load()) {
            rd.set_failure("cancelled");
            return false;
        }
        if (now - rd.t0() > target.timeout_s * 1000.0) {
            rd.set_failure("timed out: the response took longer than " + seconds(target.timeout_s));
            rd.result().timed_out = true;
            return false;
        }
        if (rd.result().http_status != 200) {
            body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, body.size())));
            return true;
        }
        if (event_stream) {
            const std::string err = sse.feed(std::string_view(data, n),
                                             [&](std::string_view d) { return rd.on_event(d); });
            if (!err.empty() && rd.failure().empty()) rd.set_failure("invalid SSE: " + err);
            if (!err.empty()) return false;
            // A server that streams past max_tokens (forever, say) is cut
            // off, not buffered: the answer's text grows with every chunk.
            streamed += n;
            if (streamed > max_stream_bytes) {
                rd.set_failure("a streamed answer longer than " + std::to_string(max_stream_bytes) +
                               " bytes for max_tokens " + std::to_string(spec.max_tokens) +
                               " (the server does not stop at max_tokens)");
                return false;
            }
            return true;
        }
        if (body.size() + n > target.max_line_bytes) {
            rd.set_failure("a response body longer than " + std::to_string(target.max_line_bytes) +
                           " bytes");
            return false;
        }
        body.append(data, n);
        return true;
    };

    rd.start(steady_now_ms());
    rd.result().send_ms = rd.t0() - epoch_ms;
    last_data = rd.t0();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    // A cancellable request is watched: cancelling shuts its socket down
    // (httplib's stop() is made for another thread), so a connect or a
    // stream that sends nothing ends at once, not at the read timeout.
    std::mutex watch_mu;
    std::condition_variable watch_cv;
    bool finished = false;
    std::thread watcher;
    if (spec.cancel) {
        watcher = std::thread([&] {
            std::unique_lock lock(watch_mu);
            while (!finished) {
                if (spec.cancel->load()) {
                    cli.stop();
                    return;
                }
                watch_cv.wait_for(lock, std::chrono::milliseconds(50));
            }
        });
    }
    const bool sent = cli.send(req, res, err);
    if (watcher.joinable()) {
        {
            std::lock_guard lock(watch_mu);
            finished = true;
        }
        watch_cv.notify_all();
        watcher.join();
    }
    const double end = steady_now_ms();
    rd.result().e2e_ms = end - rd.t0();
    RequestResult& r = rd.result();

    if (spec.cancel && spec.cancel->load() && !(sent && rd.done())) {
        r.error = "cancelled";
        return r;
    }
    if (!rd.failure().empty()) {
        r.error = rd.failure();
        return r;
    }
    if (!sent) {
        switch (err) {
            case httplib::Error::SSLConnection:
            case httplib::Error::SSLLoadingCerts:
            case httplib::Error::SSLServerVerification:
                r.error = "TLS with " + url.scheme_host_port + " failed (" +
                          httplib::to_string(err) + ")";
                break;
            case httplib::Error::Connection:
            case httplib::Error::ConnectionTimeout:
                r.error = "could not connect to " + url.scheme_host_port + " (" +
                          httplib::to_string(err) + "; connection refused or unreachable)";
                r.timed_out = err == httplib::Error::ConnectionTimeout;
                break;
            case httplib::Error::Read:
                // A read that waited the whole read timeout is a stall; a
                // sooner failure is the server closing the connection.
                if (end - last_data >= target.timeout_s * 1000.0 * 0.9) {
                    r.timed_out = true;
                    r.error = "timed out: no data for " + seconds(target.timeout_s) +
                              " (the stream stalled)";
                } else {
                    r.error = "the connection broke while reading the response (" +
                              httplib::to_string(err) + ")";
                }
                break;
            default:
                r.error = "request failed: " + httplib::to_string(err);
        }
        return r;
    }
    if (r.http_status != 200) {
        r.error = "HTTP " + std::to_string(r.http_status) + ": " + http_error_text(body);
        return r;
    }
    if (event_stream) {
        r.streamed = true;
        if (!rd.done()) {
            r.error = sse.has_pending() || rd.events() > 0
                          ? "the stream ended before 'data: [DONE]' (truncated after " +
                                std::to_string(rd.events()) + " events)"
                          : "the stream ended without any event";
            return r;
        }
        if (!r.ttft_ms) r.ttft_ms = r.e2e_ms;  // an answer with no content at all
    } else {
        // A server that ignores "stream": one JSON body; TTFT = e2e.
        r.error = rd.read_body(body);
        if (!r.error.empty()) return r;
        r.ttft_ms = r.e2e_ms;
    }
    rd.finish_counts();
    r.ok = true;
    return r;
}

}  // namespace wb::load
