#pragma once
// An httplib::Server whose connections must deliver each request (request
// line, headers and body) within one deadline. cpp-httplib 0.11's read
// timeout bounds each recv() only, so a slowloris client that trickles one
// byte a second holds a worker thread forever (seen with a raw socket:
// still connected after minutes). This server replaces httplib's
// per-connection loop (Server::process_and_close_socket) with its own: the
// same keep-alive rules, and a stream whose reads fail once the request's
// deadline has passed, after which httplib answers 400 (headers cut short)
// or closes the connection (request line cut short). Its reads also stop
// after a byte budget per request, so a client cannot make the server hold
// an endless header section (httplib 0.11 does not limit the header count).
// Qt-free. Only server.cpp includes this (it pulls in httplib.h).

#include <httplib.h>

#include <cstddef>
#include <ctime>

namespace wb::server {

class DeadlineServer : public httplib::Server {
  public:
    /// `request_deadline_s` (>= 1): the most seconds from a request's
    /// first byte being awaited (the keep-alive wait before it excluded) to
    /// its last body byte arriving. `max_request_bytes`: the most bytes
    /// read for one request (line, headers, body with chunk framing); the
    /// read past it fails as a timeout would. set_read_timeout still bounds each
    /// single read, set_write_timeout each write (answers, streams: no
    /// deadline), set_keep_alive_timeout the wait for a request to start.
    DeadlineServer(time_t request_deadline_s, size_t max_request_bytes)
        : request_deadline_s_(request_deadline_s), max_request_bytes_(max_request_bytes) {}

    /// Serves one connected stream socket on the calling thread, as a
    /// worker serves each accepted connection, then shuts it down and closes
    /// it; for tests and fuzzing (no listening socket needed: a
    /// socketpair(2) end will do). Returns whether the last request was
    /// processed.
    bool serve_connection(socket_t sock) { return process_and_close_socket(sock); }

    /// Whether the client of the connection the calling worker thread is
    /// serving has closed the connection or shut down its sending side
    /// (poll(2) reports POLLRDHUP or POLLHUP; a pipelined next request
    /// waiting to be read is not a disconnect). False on a thread serving no
    /// connection. Never blocks. A handler that answers only when its work
    /// is done calls it while it waits, to cancel work nobody will read (as
    /// llama-server does with httplib's is_connection_closed).
    static bool client_gone();

  private:
    // stop() was called on a listening server (httplib invalidates
    // svr_sock_ and keeps is_running() true until its workers are done).
    bool stopping() const { return is_running() && svr_sock_ == INVALID_SOCKET; }

    // httplib's hook for one accepted connection (virtual; called on a
    // worker thread): serves up to keep_alive_max_count_ requests, then
    // shuts the socket down and closes it. Returns whether the last
    // request was processed.
    bool process_and_close_socket(socket_t sock) override;

    time_t request_deadline_s_;
    size_t max_request_bytes_;
};

}  // namespace wb::server
