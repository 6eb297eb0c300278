#include "model_arg.h"

#include "paths.h"

namespace wb::cli {

std::string resolve_model_path(const std::optional<std::string>& given) {
    if (given) return *given;
    return wb::paths::default_model_path().string();
}

}  // namespace wb::cli
