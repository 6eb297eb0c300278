// fuzz_http: arbitrary bytes as raw HTTP from a client to the server's
// connection layer (DeadlineServer: cpp-httplib's request parsing, our
// whole-request deadline, byte budget and keep-alive loop) with the
// completion routes answering through parse_completion_request and the
// answer builders, as server.cpp's do (no engine: a body that parses gets a
// made-up answer). The client's bytes and its half-close wait in a
// socketpair(2) and the connection is served on this thread, so each input
// runs alone and replays (no TCP, no accept, no worker threads).
// The server must answer and close; a 5xx (an exception escaped a
// handler), an answer that is not HTTP/1.1, a hang (-timeout) or a
// sanitizer report is a finding.

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/api_error.h"
#include "server/deadline_server.h"
#include "server/request_parse.h"
#include "server/responses.h"

namespace {

using json = nlohmann::json;
using namespace wb::server;

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::abort();
}

void answer(Route route, const httplib::Request& req, httplib::Response& res) {
    ParseLimits limits;
    limits.model_name = "stories260K";
    limits.max_tokens_cap = 512;
    const ParseResult p = parse_completion_request(req.body, route, limits);
    const auto dump = [](const json& j) {
        return j.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    if (!p.ok()) {
        res.status = p.error.status;
        res.set_content(dump(error_body(p.error)), "application/json");
        return;
    }
    AnswerIds ids;
    ids.id = "x-1";
    ids.model = limits.model_name;
    ids.route = route;
    wb::core::FinishedRequest f;
    f.finish_reason = "stop";
    f.output = req.body.substr(0, 32);
    res.set_content(dump(full_response(ids, f, *p.request)), "application/json");
}

DeadlineServer& server() {
    static DeadlineServer* http = [] {
        auto* h = new DeadlineServer(/*request_deadline_s=*/1, /*max_request_bytes=*/1 << 18);
        h->set_read_timeout(1, 0);
        h->set_write_timeout(1, 0);
        h->set_keep_alive_timeout(1);
        h->set_payload_max_length(1 << 16);
        h->Get("/health", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"status":"ok"})", "application/json");
        });
        h->Post("/v1/chat/completions", [](const httplib::Request& q, httplib::Response& r) {
            answer(Route::ChatCompletions, q, r);
        });
        h->Post("/v1/completions", [](const httplib::Request& q, httplib::Response& r) {
            answer(Route::Completions, q, r);
        });
        return h;
    }();
    return *http;
}

void check_statuses(const std::string& out) {
    if (!out.empty() && out.rfind("HTTP/1.1 ", 0) != 0)
        finding("the server's answer is not HTTP/1.1: " + out.substr(0, 40));
    for (size_t at = out.find("HTTP/1.1 "); at != std::string::npos;
         at = out.find("HTTP/1.1 ", at + 1)) {
        if (at + 12 > out.size()) break;
        const int status = std::atoi(out.substr(at + 9, 3).c_str());
        if (status >= 500) finding("the server answered " + out.substr(at, 40));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) finding("socketpair failed");
    // Room for the whole input and every answer (at most 5 per connection),
    // so neither side waits for the other.
    const int buf = 1 << 20;
    for (const int fd : fds) {
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    }
    size_t sent = 0;
    while (sent < size) {
        const ssize_t n = ::send(fds[0], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) finding("the input does not fit the socket buffer");
        sent += static_cast<size_t>(n);
    }
    ::shutdown(fds[0], SHUT_WR);
    server().serve_connection(fds[1]);  // closes fds[1]
    std::string out;
    char chunk[8192];
    for (;;) {
        const ssize_t n = ::recv(fds[0], chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n <= 0) break;  // EOF: the server closed; nothing may be pending
        out.append(chunk, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    check_statuses(out);
    return 0;
}
