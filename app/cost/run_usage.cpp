#include "cost/run_usage.h"

#include <cmath>

namespace wb::cost {

Usage run_usage(const metrics::WindowStats& run, double busy_seconds) {
    Usage u;
    u.requests = static_cast<double>(run.requests_completed);
    u.input_tokens =
        run.prompt_tokens.count > 0
            ? std::round(run.prompt_tokens.mean * static_cast<double>(run.prompt_tokens.count))
            : 0;
    u.output_tokens = static_cast<double>(run.decode_tokens);
    u.seconds = busy_seconds;
    u.seconds_kind = "engine busy time";
    return u;
}

}  // namespace wb::cost
