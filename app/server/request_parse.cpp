#include "server/request_parse.h"

#include <cmath>
#include <limits>
#include <utility>

namespace wb::server {

namespace {

using json = nlohmann::json;

// A field of the wrong type: one wording for every field.
ApiError wrong_type(const std::string& field, const char* expected) {
    return invalid_request("'" + field + "' must be " + expected, field, "invalid_type");
}

ApiError out_of_range(const std::string& field, const std::string& range) {
    return invalid_request("'" + field + "' must be " + range, field, "invalid_value");
}

// An integer field in [lo, hi]: JSON integers only (1.5 and "3" are wrong types).
std::optional<ApiError> read_int(const json& body, const char* field, int64_t lo, int64_t hi,
                                 std::optional<int64_t>& out) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) return wrong_type(field, "an integer");
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi))
        return out_of_range(field, "between " + std::to_string(lo) + " and " + std::to_string(hi));
    const int64_t v = it->get<int64_t>();
    if (v < lo || v > hi)
        return out_of_range(field, "between " + std::to_string(lo) + " and " + std::to_string(hi));
    out = v;
    return std::nullopt;
}

std::optional<ApiError> read_number(const json& body, const char* field,
                                    std::optional<double>& out) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) return wrong_type(field, "a number");
    const double v = it->get<double>();
    if (!std::isfinite(v)) return wrong_type(field, "a finite number");
    out = v;
    return std::nullopt;
}

// One message's content: a string, null (an assistant turn with only tool
// calls), or OpenAI's array of content parts of which only text is read.
std::optional<ApiError> read_content(const json& c, size_t i, std::string& out) {
    const std::string field = "messages[" + std::to_string(i) + "].content";
    if (c.is_null()) return std::nullopt;
    if (c.is_string()) {
        out = c.get<std::string>();
        return std::nullopt;
    }
    if (!c.is_array()) return wrong_type(field, "a string or an array of text parts");
    for (size_t k = 0; k < c.size(); ++k) {
        const json& part = c[k];
        const std::string pf = field + "[" + std::to_string(k) + "]";
        if (!part.is_object()) return wrong_type(pf, "an object");
        const auto type = part.find("type");
        if (type == part.end() || !type->is_string() || *type != "text")
            return invalid_request("'" + pf + ".type' must be \"text\" (only text is supported)",
                                   pf + ".type", "unsupported_content");
        const auto text = part.find("text");
        if (text == part.end() || !text->is_string()) return wrong_type(pf + ".text", "a string");
        out += text->get<std::string>();
    }
    return std::nullopt;
}

std::optional<ApiError> read_messages(const json& body, core::GenerationRequest& gen) {
    const auto it = body.find("messages");
    if (it == body.end() || it->is_null())
        return invalid_request("'messages' is required", "messages", "missing_required_parameter");
    if (!it->is_array()) return wrong_type("messages", "an array");
    if (it->empty()) return invalid_request("'messages' must not be empty", "messages");
    for (size_t i = 0; i < it->size(); ++i) {
        const json& m = (*it)[i];
        const std::string field = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) return wrong_type(field, "an object");
        const auto role = m.find("role");
        if (role == m.end() || !role->is_string()) return wrong_type(field + ".role", "a string");
        chat::Message msg;
        msg.role = role->get<std::string>();
        // OpenAI's "developer" role is the system prompt of its newer models.
        if (msg.role == "developer") msg.role = "system";
        const auto content = m.find("content");
        if (content != m.end())
            if (auto e = read_content(*content, i, msg.content)) return e;
        gen.messages.push_back(std::move(msg));
    }
    return std::nullopt;
}

std::optional<ApiError> read_prompt(const json& body, core::GenerationRequest& gen) {
    const auto it = body.find("prompt");
    if (it == body.end() || it->is_null())
        return invalid_request("'prompt' is required", "prompt", "missing_required_parameter");
    if (it->is_string()) {
        gen.prompt = it->get<std::string>();
        return std::nullopt;
    }
    if (!it->is_array() || it->empty())
        return wrong_type("prompt", "a string, an array of one string or an array of token ids");
    if ((*it)[0].is_string()) {
        if (it->size() != 1)
            return invalid_request("'prompt' may hold one string only (n=1, no batches)", "prompt");
        gen.prompt = (*it)[0].get<std::string>();
        return std::nullopt;
    }
    for (size_t i = 0; i < it->size(); ++i) {
        const json& t = (*it)[i];
        if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
            t.get<int64_t>() > std::numeric_limits<int32_t>::max())
            return wrong_type("prompt[" + std::to_string(i) + "]", "a token id (integer >= 0)");
        gen.prompt_tokens.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    return std::nullopt;
}

std::optional<ApiError> read_stop(const json& body, core::GenerationRequest& gen) {
    const auto it = body.find("stop");
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (it->is_string()) {
        gen.stop.push_back(it->get<std::string>());
        return std::nullopt;
    }
    if (!it->is_array()) return wrong_type("stop", "a string or an array of strings");
    if (it->size() > 4) return out_of_range("stop", "at most 4 strings");
    for (size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string()) return wrong_type("stop[" + std::to_string(i) + "]", "a string");
        gen.stop.push_back((*it)[i].get<std::string>());
    }
    return std::nullopt;
}

std::optional<ApiError> read_user(const json& body, CompletionRequest& r) {
    const auto it = body.find("user");
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) return wrong_type("user", "a string");
    r.user = it->get<std::string>();
    if (r.user.size() > 256) return invalid_request("'user' is longer than 256 bytes", "user");
    return std::nullopt;
}

std::optional<ApiError> read_stream(const json& body, CompletionRequest& r) {
    if (const auto it = body.find("stream"); it != body.end() && !it->is_null()) {
        if (!it->is_boolean()) return wrong_type("stream", "a boolean");
        r.stream = it->get<bool>();
    }
    const auto so = body.find("stream_options");
    if (so == body.end() || so->is_null()) return std::nullopt;
    if (!so->is_object()) return wrong_type("stream_options", "an object");
    if (!r.stream)
        return invalid_request("'stream_options' is only allowed when 'stream' is true",
                               "stream_options");
    if (const auto iu = so->find("include_usage"); iu != so->end() && !iu->is_null()) {
        if (!iu->is_boolean()) return wrong_type("stream_options.include_usage", "a boolean");
        r.include_usage = iu->get<bool>();
    }
    return std::nullopt;
}

std::optional<ApiError> read_logprobs(const json& body, CompletionRequest& r) {
    const auto lp = body.find("logprobs");
    const bool given = lp != body.end() && !lp->is_null();
    if (r.route == Route::Completions) {
        // Legacy completions: logprobs is the number of alternatives, 0..5.
        std::optional<int64_t> n;
        if (auto e = read_int(body, "logprobs", 0, 5, n)) return e;
        r.logprobs = n.has_value();
        r.top_logprobs = static_cast<int32_t>(n.value_or(0));
        return std::nullopt;
    }
    if (given) {
        if (!lp->is_boolean()) return wrong_type("logprobs", "a boolean");
        r.logprobs = lp->get<bool>();
    }
    std::optional<int64_t> top;
    if (auto e = read_int(body, "top_logprobs", 0, 20, top)) return e;
    if (top && !r.logprobs)
        return invalid_request("'top_logprobs' needs 'logprobs' set to true", "top_logprobs");
    r.top_logprobs = static_cast<int32_t>(top.value_or(0));
    return std::nullopt;
}

std::optional<ApiError> read_sampling(const json& body, core::GenerationRequest& gen) {
    // OpenAI's sampling: temperature and nucleus only; the engine's extra
    // filters (top-k, min-p, repeat penalty) are off.
    gen.sampling.temperature = 1.0f;
    gen.sampling.top_p = 1.0f;
    gen.sampling.top_k = 0;
    gen.sampling.min_p = 0.0f;
    gen.sampling.repeat_penalty = 1.0f;
    std::optional<double> temp, top_p;
    if (auto e = read_number(body, "temperature", temp)) return e;
    if (temp) {
        if (*temp < 0.0 || *temp > 2.0) return out_of_range("temperature", "between 0 and 2");
        gen.sampling.temperature = static_cast<float>(*temp);
    }
    if (auto e = read_number(body, "top_p", top_p)) return e;
    if (top_p) {
        if (*top_p <= 0.0 || *top_p > 1.0)
            return out_of_range("top_p", "greater than 0 and at most 1");
        gen.sampling.top_p = static_cast<float>(*top_p);
    }
    std::optional<int64_t> seed;
    if (auto e = read_int(body, "seed", std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), seed))
        return e;
    if (seed) {
        gen.seed = {core::SeedPolicy::Fixed, static_cast<uint64_t>(*seed), 0};
    } else {
        gen.seed = {core::SeedPolicy::Random, 0, 0};
    }
    return std::nullopt;
}

}  // namespace

const char* route_path(Route r) {
    return r == Route::ChatCompletions ? "/v1/chat/completions" : "/v1/completions";
}

ParseResult parse_completion_request(std::string_view body_text, Route route,
                                     const ParseLimits& limits) {
    ParseResult out;
    auto fail = [&out](ApiError e) {
        out.error = std::move(e);
        return out;
    };
    const json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded())
        return fail(invalid_request("the request body is not valid JSON", "", "invalid_json"));
    if (!body.is_object()) return fail(wrong_type("body", "a JSON object"));

    CompletionRequest r;
    r.route = route;
    const auto model = body.find("model");
    if (model == body.end() || model->is_null())
        return fail(invalid_request("'model' is required", "model", "missing_required_parameter"));
    if (!model->is_string()) return fail(wrong_type("model", "a string"));
    if (model->get<std::string>() != limits.model_name) {
        ApiError e =
            invalid_request("The model '" + model->get<std::string>() +
                                "' does not exist; this server serves '" + limits.model_name + "'",
                            "model", "model_not_found");
        e.status = 404;
        return fail(std::move(e));
    }
    if (route == Route::ChatCompletions) {
        if (auto e = read_messages(body, r.gen)) return fail(std::move(*e));
        r.gen.chat_template = "model";
    } else {
        if (auto e = read_prompt(body, r.gen)) return fail(std::move(*e));
    }

    std::optional<int64_t> n, max_tokens, max_completion;
    if (auto e = read_int(body, "n", std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), n))
        return fail(std::move(*e));
    if (n && *n != 1) return fail(out_of_range("n", "1 (one choice per request)"));
    if (auto e = read_int(body, "max_tokens", 1, limits.max_tokens_cap, max_tokens))
        return fail(std::move(*e));
    if (auto e = read_int(body, "max_completion_tokens", 1, limits.max_tokens_cap, max_completion))
        return fail(std::move(*e));
    r.gen.max_tokens = static_cast<int32_t>(
        max_completion.value_or(max_tokens.value_or(limits.default_max_tokens)));
    if (auto e = read_sampling(body, r.gen)) return fail(std::move(*e));
    if (auto e = read_stop(body, r.gen)) return fail(std::move(*e));
    if (auto e = read_stream(body, r)) return fail(std::move(*e));
    if (auto e = read_logprobs(body, r)) return fail(std::move(*e));
    if (auto e = read_user(body, r)) return fail(std::move(*e));
    out.request = std::move(r);
    return out;
}

}  // namespace wb::server
