#include "paths.h"

#include <stdexcept>
#include <system_error>

namespace wb::paths {

namespace fs = std::filesystem;

fs::path executable_path() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
    return exe;
}

namespace {

std::vector<fs::path> search_dirs(const fs::path& exe, const char* sub) {
    fs::path dir = exe.parent_path();
    std::vector<fs::path> dirs;
    for (int up = 0; up <= kMaxBuildDepth && !dir.empty(); ++up) {
        dirs.push_back(dir / "share" / "inference-workbench" / sub);
        dirs.push_back(dir / "resources" / sub);
        if (dir == dir.root_path()) break;
        dir = dir.parent_path();
    }
    return dirs;
}

}  // namespace

std::vector<fs::path> model_search_dirs(const fs::path& exe) {
    return search_dirs(exe, "models");
}

std::vector<fs::path> sample_search_dirs(const fs::path& exe) {
    return search_dirs(exe, "samples");
}

fs::path find_sample(const std::string& name) {
    try {
        for (const fs::path& d : sample_search_dirs(executable_path())) {
            std::error_code ec;
            if (fs::is_regular_file(d / name, ec)) return d / name;
        }
    } catch (const std::exception&) {
        // No /proc/self/exe: no samples, the caller asks for files instead.
    }
    return {};
}

fs::path default_model_path() {
    const std::vector<fs::path> dirs = model_search_dirs(executable_path());
    std::string looked;
    for (const fs::path& d : dirs) {
        fs::path candidate = d / kDefaultModelName;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return candidate;
        if (!looked.empty()) looked += ", ";
        looked += d.string();
    }
    throw std::runtime_error(std::string("default model ") + kDefaultModelName +
                             " not found; looked in: " + looked + " (pass -m MODEL)");
}

}  // namespace wb::paths
