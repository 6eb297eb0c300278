#include "server/api_error.h"

#include <utility>

namespace wb::server {

nlohmann::json error_body(const ApiError& e) {
    auto or_null = [](const std::string& s) {
        return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
    };
    return {{"error",
             {{"message", e.message},
              {"type", e.type},
              {"param", or_null(e.param)},
              {"code", or_null(e.code)}}}};
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
    ApiError e;
    e.status = 400;
    e.message = std::move(message);
    e.param = std::move(param);
    e.code = std::move(code);
    return e;
}

}  // namespace wb::server
