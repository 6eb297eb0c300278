#pragma once
// Conversion between JSON documents and template values (messages and
// tools arrive as JSON from files, stdin and HTTP requests).

#include <nlohmann/json.hpp>

#include "chat/jinja/value.h"

namespace wb::chat::jinja {

/// The value of a JSON document: objects become dicts in document order,
/// arrays lists, integers int (unsigned ones above INT64_MAX become
/// float), other numbers float, null None. Nesting deeper than 256 levels
/// throws std::invalid_argument.
Value from_json(const nlohmann::ordered_json& j);

}  // namespace wb::chat::jinja
