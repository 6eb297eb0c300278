// Test helper process for the run log (Qt-free, links wb_runlog):
//
//   runlog_writer crash DB MODEL   logs responses forever, printing
//                                  "committed <response id>" after each
//                                  commit; the test kills it with SIGKILL.
//   runlog_writer stream DB MODEL  streams one response into its started
//                                  row (begin_response, update_response),
//                                  printing "updated <n>" after each commit;
//                                  the test kills it with SIGKILL.
//   runlog_writer open DB          opens DB strictly and prints "ok" or
//                                  "error <problem>: <message>". As root it
//                                  first drops to uid/gid 65534 (nobody) so
//                                  file permissions apply (read-only tests).

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "runlog/run_log.h"
#include "runlog/time_utc.h"

using namespace wb::runlog;

namespace {

const char* problem_name(OpenProblem p) {
    switch (p) {
        case OpenProblem::CannotOpen:
            return "CannotOpen";
        case OpenProblem::NotSqlite:
            return "NotSqlite";
        case OpenProblem::Corrupt:
            return "Corrupt";
        case OpenProblem::Foreign:
            return "Foreign";
        case OpenProblem::NewerSchema:
            return "NewerSchema";
        case OpenProblem::ReadOnly:
            return "ReadOnly";
    }
    return "?";
}

int crash(const std::string& db, const std::string& model) {
    RunLog log = RunLog::open(db);
    const int64_t run = log.begin_run(RunKind::Batch, "crash test", {{"n_parallel", 4}});
    const int64_t mv = log.ensure_model_version(model);
    const int64_t env = log.ensure_environment(collect_environment("cpu"));
    for (int i = 0;; ++i) {
        ResponseRecord r;
        r.run_id = run;
        r.model_version_id = mv;
        r.environment_id = env;
        r.request_id = "p" + std::to_string(i);
        r.settings = {{"seed", i}, {"max_tokens", 16}};
        r.prompt = "prompt " + std::to_string(i);
        r.output = std::string(200, 'x');
        r.finish_reason = "length";
        r.started_ms = now_utc_ms();
        const int64_t id = log.log_response(r);
        // Reported only after log_response returned, i.e. after COMMIT.
        std::printf("committed %lld\n", static_cast<long long>(id));
        std::fflush(stdout);
        usleep(1000);
    }
}

// One response streamed into its started row: begin_response, then an
// update after each of many pieces, printing "updated <n>" once the update
// is committed; the test kills it with SIGKILL mid-stream.
int stream(const std::string& db, const std::string& model) {
    RunLog log = RunLog::open(db);
    ResponseRecord r;
    r.run_id = log.begin_run(RunKind::Generate, "stream test", {{"max_tokens", 100000}});
    r.model_version_id = log.ensure_model_version(model);
    r.environment_id = log.ensure_environment(collect_environment("cpu"));
    r.request_id = "streamed";
    r.settings = {{"max_tokens", 100000}};
    r.prompt = "Once upon a time";
    r.started_ms = now_utc_ms();
    const int64_t id = log.begin_response(r);
    std::string text;
    for (int n = 1;; ++n) {
        text += "piece" + std::to_string(n) + " ";
        log.update_response(id, text, n);
        std::printf("updated %d\n", n);
        std::fflush(stdout);
        usleep(2000);
    }
}

int open_only(const std::string& db) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
        std::printf("error setuid: %s\n", std::strerror(errno));
        return 2;
    }
    try {
        RunLog log = RunLog::open(db);
        std::printf("ok\n");
        return 0;
    } catch (const OpenError& e) {
        std::printf("error %s: %s\n", problem_name(e.problem()), e.what());
        return 1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 4 && std::strcmp(argv[1], "crash") == 0) return crash(argv[2], argv[3]);
        if (argc == 3 && std::strcmp(argv[1], "open") == 0) return open_only(argv[2]);
        if (argc == 4 && std::strcmp(argv[1], "stream") == 0) return stream(argv[2], argv[3]);
    } catch (const std::exception& e) {
        std::printf("error exception: %s\n", e.what());
        return 3;
    }
    std::fprintf(stderr, "usage: runlog_writer crash DB MODEL | stream DB MODEL | open DB\n");
    return 64;
}
