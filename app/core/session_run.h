#pragma once
// The run-log side of one command-line run on one session: the run row, the
// model's identity and environment, the session's cold start, and the
// session recording every request of the run as it runs (a
// core::ResponseLogger as its recorder). `generate` and `batch` begin their
// runs with it, so a command only parses options and presents results.
// Qt-free.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/engine_session.h"
#include "core/response_log.h"

namespace wb::core {

/// A run begun by begin_session_run.
struct SessionRun {
    int64_t run_id = 0;        ///< RunLog run id: set it as GenerationRequest::run_id
    std::string load_warning;  ///< why the cold start is not logged ("" when it is)
};

/// Begins a run of `kind` ("generate", "batch", ...) named `name` with the
/// run settings `settings` on `logger`, resolves the session's model version
/// and environment now (the first use hashes the model file: an error comes
/// before any work, not after it), logs the session's cold start as a
/// model_loads row of surface `kind` for this run (a failure becomes
/// load_warning, the run goes on), and makes `logger` the session's
/// recorder: every request submitted with the returned run id is logged as
/// it runs. With `no_text` the run stores no prompt or output text
/// (RunLog::begin_run's no_text: counts, hashes and timings only). Throws
/// what ResponseLogger::begin_run and tags() throw.
SessionRun begin_session_run(const std::shared_ptr<ResponseLogger>& logger, EngineSession& session,
                             std::string_view kind, const std::string& name,
                             const nlohmann::json& settings, bool no_text = false);

}  // namespace wb::core
