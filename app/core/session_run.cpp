#include "core/session_run.h"

#include <exception>

namespace wb::core {

SessionRun begin_session_run(const std::shared_ptr<ResponseLogger>& logger, EngineSession& session,
                             std::string_view kind, const std::string& name,
                             const nlohmann::json& settings, bool no_text) {
    SessionRun run;
    run.run_id = logger->begin_run(kind, name, settings, no_text);
    logger->tags(session.model_path(), session.device());
    try {  // its first token comes with the first request that has one
        logger->log_load(session, kind, run.run_id);
    } catch (const std::exception& e) {
        run.load_warning = e.what();
    }
    session.set_recorder(logger);
    return run;
}

}  // namespace wb::core
