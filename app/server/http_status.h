#pragma once
// The HTTP status a request that reached the engine is answered with, and
// the run-log recorder that writes it into each row's settings: one rule
// for the answer and the log, so the run log's http_status is the status the
// client got.
// Qt-free.

#include <memory>

#include "core/engine_session.h"
#include "core/finished_request.h"

namespace wb::server {

/// The status of `f` (its settings' "stream" says whether it was streamed):
///   refused, queue full (finish reason "rejected")        429
///   refused otherwise (prompt longer than the context)     400
///   streamed and admitted (headers went out as 200)        200
///   not streamed: "error" 500, "timeout" 504, "cancelled" 503 (the server
///   stopped), else 200.
int http_status_of(const core::FinishedRequest& f);

/// A recorder that passes every event to `inner` (the run log's
/// core::ResponseLogger) with "http_status" added to the request's
/// settings: 200 when it starts, http_status_of() when it finishes.
/// `inner` null: returns null.
std::shared_ptr<core::RequestRecorder> with_http_status(
    std::shared_ptr<core::RequestRecorder> inner);

}  // namespace wb::server
