#pragma once
// What serving a workload costs, from a price per target: either per hour
// of the machine (a GPU-hour: each request is priced by the time it kept
// the engine busy) or per million input and output tokens (a hosted API's
// price list). One formula for Batch, Load, Compare and their exports;
// formula() says it in words beside every figure.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace wb::cost {

/// A target's price. Amounts are in `currency` units (a label only: no
/// conversion); every amount is >= 0 and finite.
struct Price {
    enum class Basis {
        PerHour,     ///< `per_hour` per hour of engine time
        PerMTokens,  ///< `per_m_input` / `per_m_output` per million tokens
    };
    Basis basis = Basis::PerHour;
    double per_hour = 0;      ///< currency per hour (PerHour)
    double per_m_input = 0;   ///< currency per 1e6 input (prompt) tokens (PerMTokens)
    double per_m_output = 0;  ///< currency per 1e6 output (generated) tokens (PerMTokens)
    std::string currency = "USD";
};

/// Builds a price from command-line values: `per_hour`, or `per_m_input`
/// and/or `per_m_output` (a missing one is 0), never both kinds; nullopt
/// when none is given. Throws std::invalid_argument naming the option for
/// a negative or non-finite amount, or for both kinds at once.
std::optional<Price> price_from_options(std::optional<double> per_hour,
                                        std::optional<double> per_m_input,
                                        std::optional<double> per_m_output,
                                        const std::string& currency = "USD");

/// The same from a form's fields, where 0 means "not given" (the Load and
/// Batch tabs). Throws std::invalid_argument for a negative or non-finite
/// amount, or for a price per hour beside prices per token.
std::optional<Price> price_from_fields(double per_hour, double per_m_input, double per_m_output,
                                       const std::string& currency = "USD");

/// What a workload used.
struct Usage {
    double requests = 0;       ///< requests answered (the ones priced)
    double input_tokens = 0;   ///< prompt tokens of those requests
    double output_tokens = 0;  ///< generated tokens of those requests
    /// Seconds of the priced time: the engine's busy time for a local
    /// engine, the step's wall time for a remote endpoint (its hour is paid
    /// whether it is busy or not). Used by Basis::PerHour.
    double seconds = 0;
    /// What `seconds` is, for the formula: "engine busy time", "wall time".
    std::string seconds_kind = "engine busy time";
};

/// The cost of a workload. NaN where a figure has no meaning (no
/// requests, no output tokens).
struct Figures {
    double total = 0;                ///< currency for the whole workload
    double per_request = 0;          ///< total / requests
    double per_1k_requests = 0;      ///< 1000 * per_request
    double per_m_output_tokens = 0;  ///< 1e6 * total / output_tokens
    std::string formula;             ///< in words, with the numbers used
};

/// Prices `u` at `p`: PerHour: total = per_hour * seconds / 3600;
/// PerMTokens: total = (per_m_input * input_tokens + per_m_output *
/// output_tokens) / 1e6. Never throws but bad_alloc.
Figures figures(const Price& p, const Usage& u);

/// {"total","per_request","per_1k_requests","per_m_output_tokens",
/// "formula"}; a NaN figure is null.
nlohmann::json to_json(const Figures& f);

/// {"basis": "per_hour"|"per_m_tokens", "per_hour" or "per_m_input" and
/// "per_m_output", "currency"}.
nlohmann::json to_json(const Price& p);

}  // namespace wb::cost
