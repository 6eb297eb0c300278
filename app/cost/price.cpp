#include "cost/price.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wb::cost {
namespace {

void check_amount(const char* option, std::optional<double> v) {
    if (v && !(std::isfinite(*v) && *v >= 0)) {
        throw std::invalid_argument(std::string(option) + ": a price must be a finite amount >= 0");
    }
}

std::string num(double v) {
    char b[48];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

}  // namespace

std::optional<Price> price_from_options(std::optional<double> per_hour,
                                        std::optional<double> per_m_input,
                                        std::optional<double> per_m_output,
                                        const std::string& currency) {
    check_amount("--price-per-hour", per_hour);
    check_amount("--price-per-m-input", per_m_input);
    check_amount("--price-per-m-output", per_m_output);
    if (per_hour && (per_m_input || per_m_output)) {
        throw std::invalid_argument(
            "--price-per-hour excludes --price-per-m-input and --price-per-m-output: a target "
            "is priced by the hour or by the token");
    }
    Price p;
    p.currency = currency;
    if (per_hour) {
        p.basis = Price::Basis::PerHour;
        p.per_hour = *per_hour;
        return p;
    }
    if (per_m_input || per_m_output) {
        p.basis = Price::Basis::PerMTokens;
        p.per_m_input = per_m_input.value_or(0);
        p.per_m_output = per_m_output.value_or(0);
        return p;
    }
    return std::nullopt;
}

std::optional<Price> price_from_fields(double per_hour, double per_m_input, double per_m_output,
                                       const std::string& currency) {
    for (const double v : {per_hour, per_m_input, per_m_output}) {
        if (!(std::isfinite(v) && v >= 0))
            throw std::invalid_argument("a price must be a finite amount >= 0");
    }
    if (per_hour > 0 && (per_m_input > 0 || per_m_output > 0)) {
        throw std::invalid_argument(
            "a price per hour excludes prices per token: a target is priced by the hour or by "
            "the token");
    }
    const auto given = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
    return price_from_options(given(per_hour), given(per_m_input), given(per_m_output), currency);
}

Figures figures(const Price& p, const Usage& u) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    Figures f;
    const std::string& c = p.currency;
    if (p.basis == Price::Basis::PerHour) {
        f.total = p.per_hour * u.seconds / 3600.0;
        f.formula = num(p.per_hour) + " " + c + "/h x " + num(u.seconds) + " s of " +
                    u.seconds_kind + " / 3600 = " + num(f.total) + " " + c;
    } else {
        f.total = (p.per_m_input * u.input_tokens + p.per_m_output * u.output_tokens) / 1e6;
        f.formula = "(" + num(p.per_m_input) + " " + c + "/M x " + num(u.input_tokens) +
                    " input tokens + " + num(p.per_m_output) + " " + c + "/M x " +
                    num(u.output_tokens) + " output tokens) / 1e6 = " + num(f.total) + " " + c;
    }
    f.per_request = u.requests > 0 ? f.total / u.requests : nan;
    f.per_1k_requests = 1000.0 * f.per_request;
    f.per_m_output_tokens = u.output_tokens > 0 ? 1e6 * f.total / u.output_tokens : nan;
    f.formula += "; per request: total / " + num(u.requests) + " requests";
    return f;
}

nlohmann::json to_json(const Figures& f) {
    const auto num = [](double v) {
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    return {{"total", num(f.total)},
            {"per_request", num(f.per_request)},
            {"per_1k_requests", num(f.per_1k_requests)},
            {"per_m_output_tokens", num(f.per_m_output_tokens)},
            {"formula", f.formula}};
}

nlohmann::json to_json(const Price& p) {
    if (p.basis == Price::Basis::PerHour) {
        return {{"basis", "per_hour"}, {"per_hour", p.per_hour}, {"currency", p.currency}};
    }
    return {{"basis", "per_m_tokens"},
            {"per_m_input", p.per_m_input},
            {"per_m_output", p.per_m_output},
            {"currency", p.currency}};
}

}  // namespace wb::cost
