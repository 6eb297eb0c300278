// fuzz_answer: arbitrary bytes as what an OpenAI-compatible server answers
// the load-test client (app/load/sse.h, app/load/answer_reader.h), without
// the network. The first byte picks what the bytes are:
//   0..127   a text/event-stream, fed to SseReader in pieces whose sizes
//            come from the second byte (a TCP read splits anywhere), each
//            event to AnswerReader::on_event;
//   128..191 a non-streamed JSON answer body (AnswerReader::read_body);
//   192..223 a non-200 answer's body (http_error_text);
//   224..255 a GET /scheduler/passes body (parse_passes: the documented
//            shape or std::runtime_error, a sentence; then its sums).
// The contract: no crash, no sanitizer report, no unbounded memory (the
// reader keeps at most one line and one event: 64 KiB here), every failure
// a sentence; and the counts stay consistent (one TTFT before any ITL, ITL
// gaps = content chunks - 1).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "load/answer_reader.h"
#include "load/sse.h"
#include "load/telemetry.h"

namespace {

[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "%s\n", what);
    std::abort();
}

void require(bool ok, const char* what) {
    if (!ok) finding(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const uint8_t mode = data[0];
    const size_t piece = 1 + data[1] % 97;  // 1..97 bytes per read
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
    // A fixed clock: each reading is 1 ms after the last.
    double clock = 0;
    wb::load::AnswerReader rd({}, [&clock] { return clock += 1.0; });
    rd.start(0);

    if (mode < 128) {
        // Regression inputs may be longer than -max_len: the limit covers them.
        wb::load::SseReader sse(2u << 20);
        std::string err;
        for (size_t at = 0; at < bytes.size() && err.empty(); at += piece) {
            err = sse.feed(bytes.substr(at, piece),
                           [&](std::string_view d) { return rd.on_event(d); });
        }
        if (!err.empty() && err != "stopped")
            require(err.find("SSE") != std::string::npos, "an SSE error that does not say SSE");
        if (err == "stopped") require(!rd.failure().empty(), "stopped without a reason");
    } else if (mode < 192) {
        const std::string why = rd.read_body(bytes);
        if (!why.empty()) require(why.size() > 10, "a body refused without a sentence");
    } else if (mode >= 224) {
        try {
            const wb::load::PassPage p = wb::load::parse_passes(bytes);
            std::vector<wb::load::TelemetryRow> rows;
            for (const auto& t : p.passes) rows.push_back({t.end_ms, t});
            const wb::load::SchedulerStats st = wb::load::scheduler_stats(rows, -1e300, 1e300);
            require(st.passes == rows.size(), "passes lost in the sums");
            (void)wb::load::telemetry_csv(rows, {{"s", -1e300, 1e300}});
        } catch (const std::runtime_error& e) {
            require(std::string_view(e.what()).size() > 30,
                    "a telemetry body refused without a sentence");
        }
        return 0;
    } else {
        const std::string text = wb::load::http_error_text(bytes);
        require(text.size() <= bytes.size() + 3, "an error text longer than the body");
        return 0;
    }
    rd.result().e2e_ms = clock + 1.0;
    rd.finish_counts();
    const wb::load::RequestResult& r = rd.result();
    if (!r.itl_ms.empty()) require(r.ttft_ms.has_value(), "inter-token gaps without a TTFT");
    for (const double g : r.itl_ms) require(g > 0, "a gap that is not positive");
    return 0;
}
