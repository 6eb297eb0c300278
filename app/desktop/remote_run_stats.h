#pragma once
// A batch run against a remote endpoint, measured from the client's side:
// each finished reply's TTFT, inter-token gaps and end-to-end time placed
// on the run's clock, kept in a metrics store like the local engine's, so
// the run's summary reads the same for both (BatchPanel's summary).

#include <memory>

#include "desktop/request_types.h"
#include "metrics/metrics_store.h"

namespace wb::gui {

/// The client-side metrics of one remote batch run. Not thread-safe: fed
/// and read on the GUI thread.
class RemoteRunStats {
  public:
    RemoteRunStats();
    ~RemoteRunStats();

    /// Records reply `r`, which finished `finish_ms` ms after the run
    /// started (the run's clock): sent at finish - e2e, its first token
    /// TTFT after that, then each inter-token gap. The endpoint's queue is
    /// inside its TTFT (queue wait 0) and its busy time is unknown (steps
    /// of 0 ms carrying the reply's prompt and generated tokens).
    void record(const RequestResult& r, double finish_ms);

    /// Statistics over every reply recorded so far (TTFT, ITL, e2e in ms;
    /// throughput in tokens/s over the run's span).
    metrics::WindowStats summary() const;

  private:
    std::unique_ptr<metrics::MetricsStore> store_;
};

}  // namespace wb::gui
