#pragma once
// The model file a command works on: the -m/--model value, or the bundled
// default model (app/paths.h) when none is given.

#include <optional>
#include <string>

namespace wb::cli {

/// `given` if set, else wb::paths::default_model_path(). Throws
/// std::runtime_error listing the folders searched when there is no
/// default model.
std::string resolve_model_path(const std::optional<std::string>& given);

}  // namespace wb::cli
