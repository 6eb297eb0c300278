#include "server/deadline_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace wb::server {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// poll(2) for `events` up to `ms`, retried on EINTR: >0 ready, 0 timed out,
// <0 error.
int wait_for(socket_t sock, short events, int ms) {
    pollfd p{};
    p.fd = sock;
    p.events = events;
    for (;;) {
        const int r = ::poll(&p, 1, std::max(ms, 0));
        if (r < 0 && errno == EINTR) continue;
        if (r > 0 && (p.revents & (POLLERR | POLLNVAL)) != 0) return -1;
        return r;
    }
}

int to_ms(time_t sec, time_t usec) {
    return static_cast<int>(std::min<time_t>(sec * 1000 + usec / 1000, 1 << 30));
}

void address_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
    char host[NI_MAXHOST] = {};
    char serv[NI_MAXSERV] = {};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof(host), serv,
                      sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
        ip = host;
        port = std::atoi(serv);
    }
}

// One connection's stream: reads buffered (httplib reads the request line
// and headers a byte at a time) and refused once the current request's
// deadline passed or its byte budget is spent; each read also waits at most the read timeout, each
// write at most the write timeout.
class DeadlineStream final : public httplib::Stream {
  public:
    DeadlineStream(socket_t sock, int read_ms, int write_ms)
        : sock_(sock), read_ms_(read_ms), write_ms_(write_ms) {}

    void start_request(Clock::time_point deadline, size_t max_bytes) {
        deadline_ = deadline;
        bytes_left_ = max_bytes;
    }
    bool has_buffered() const { return off_ < len_; }

    bool is_readable() const override {
        return has_buffered() || wait_for(sock_, POLLIN, read_wait_ms()) > 0;
    }
    bool is_writable() const override { return wait_for(sock_, POLLOUT, write_ms_) > 0; }

    ssize_t read(char* ptr, size_t size) override {
        if (size == 0) return 0;
        if (!has_buffered()) {
            if (read_wait_ms() <= 0 || wait_for(sock_, POLLIN, read_wait_ms()) <= 0) return -1;
            ssize_t n;
            do {
                n = ::recv(sock_, buf_, sizeof(buf_), 0);
            } while (n < 0 && errno == EINTR);
            if (n <= 0) return n;
            off_ = 0;
            len_ = static_cast<size_t>(n);
        }
        const size_t n = std::min({size, len_ - off_, bytes_left_});
        if (n == 0) return -1;
        bytes_left_ -= n;
        std::memcpy(ptr, buf_ + off_, n);
        off_ += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char* ptr, size_t size) override {
        if (!is_writable()) return -1;
        ssize_t n;
        do {
            n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        return n;
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override {
        sockaddr_storage addr{};
        socklen_t len = sizeof(addr);
        if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
            address_of(addr, len, ip, port);
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
        sockaddr_storage addr{};
        socklen_t len = sizeof(addr);
        if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
            address_of(addr, len, ip, port);
    }
    socket_t socket() const override { return sock_; }

  private:
    // The wait of one read: the read timeout, cut to what is left of the
    // request's deadline.
    int read_wait_ms() const {
        const auto left =
            std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now()).count();
        return static_cast<int>(std::min<long long>(left, read_ms_));
    }

    socket_t sock_;
    int read_ms_;
    int write_ms_;
    Clock::time_point deadline_ = Clock::now();
    char buf_[4096];
    size_t off_ = 0;
    size_t len_ = 0;
    size_t bytes_left_ = 0;
};

}  // namespace

namespace {
// The connection this worker thread serves (client_gone()).
thread_local socket_t t_serving = INVALID_SOCKET;
}  // namespace

bool DeadlineServer::client_gone() {
    if (t_serving == INVALID_SOCKET) return false;
    pollfd p{};
    p.fd = t_serving;
    p.events = POLLIN | POLLRDHUP;
    int r;
    do {
        r = ::poll(&p, 1, 0);
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool DeadlineServer::process_and_close_socket(socket_t sock) {
    struct Serving {
        explicit Serving(socket_t s) { t_serving = s; }
        ~Serving() { t_serving = INVALID_SOCKET; }
        Serving(const Serving&) = delete;
        Serving& operator=(const Serving&) = delete;
    } const serving(sock);
    DeadlineStream strm(sock, to_ms(read_timeout_sec_, read_timeout_usec_),
                        to_ms(write_timeout_sec_, write_timeout_usec_));
    bool ret = false;
    // httplib's keep-alive rule: at most keep_alive_max_count_ requests, each
    // awaited for keep_alive_timeout_sec_; the last one is answered with
    // "Connection: close". The wait is sliced so stop() is seen within
    // 100 ms.
    for (size_t count = keep_alive_max_count_; count > 0 && !stopping(); --count) {
        const auto idle_until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
        bool ready = strm.has_buffered();
        while (!ready && !stopping() && Clock::now() < idle_until) {
            const int r = wait_for(sock, POLLIN, 100);
            if (r < 0) break;
            ready = r > 0;
        }
        if (!ready) break;
        strm.start_request(Clock::now() + std::chrono::seconds(request_deadline_s_),
                           max_request_bytes_);
        bool connection_closed = false;
        ret = process_request(strm, count == 1, connection_closed, nullptr);
        if (!ret || connection_closed) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ret;
}

}  // namespace wb::server
