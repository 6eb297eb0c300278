#include "chat/jinja/json_value.h"

#include <stdexcept>

namespace wb::chat::jinja {

namespace {

Value convert(const nlohmann::ordered_json& j, int depth) {
    if (depth > 256) throw std::invalid_argument("JSON nests deeper than 256 levels");
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null:
            return Value(nullptr);
        case nlohmann::ordered_json::value_t::boolean:
            return Value(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer:
            return Value(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            const uint64_t u = j.get<uint64_t>();
            if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
            return Value(static_cast<double>(u));
        }
        case nlohmann::ordered_json::value_t::number_float:
            return Value(j.get<double>());
        case nlohmann::ordered_json::value_t::string:
            return Value(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            std::vector<Value> items;
            items.reserve(j.size());
            for (const auto& x : j) items.push_back(convert(x, depth + 1));
            return Value::list(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            std::vector<std::pair<Value, Value>> items;
            items.reserve(j.size());
            for (auto it = j.begin(); it != j.end(); ++it)
                items.emplace_back(Value(it.key()), convert(it.value(), depth + 1));
            return Value::dict(std::move(items));
        }
        default:
            return Value(nullptr);  // binary / discarded: not produced by the parser
    }
}

}  // namespace

Value from_json(const nlohmann::ordered_json& j) {
    return convert(j, 0);
}

}  // namespace wb::chat::jinja
