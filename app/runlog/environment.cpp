#include "runlog/environment.h"

#include <sys/utsname.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "wb_version.h"

namespace wb::runlog {

namespace {

std::string read_text(const char* path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

std::string os_pretty_name(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
        std::string v = trim(line.substr(12));
        // os-release values use shell quoting: "..." with \" \\ \$ \` escapes, or '...'.
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
            const char q = v.front();
            std::string out;
            for (size_t i = 1; i + 1 < v.size(); ++i) {
                if (q == '"' && v[i] == '\\' && i + 2 < v.size()) ++i;
                out += v[i];
            }
            return out;
        }
        return v;
    }
    return {};
}

std::string cpu_model_name(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        if (trim(line.substr(0, colon)) == "model name") return trim(line.substr(colon + 1));
    }
    return {};
}

EnvironmentInfo collect_environment(const std::string& backend) {
    model::DeviceFacts d;
    d.backend = backend;
    return collect_environment(d);
}

EnvironmentInfo collect_environment(const model::DeviceFacts& device) {
    if (device.backend != "vulkan" && device.backend != "cpu")
        throw std::invalid_argument("environment backend must be \"vulkan\" or \"cpu\", got \"" +
                                    device.backend + "\"");
    EnvironmentInfo e;
    e.app_version = WB_VERSION;
    e.git_commit = WB_GIT_COMMIT;
    e.os = os_pretty_name(read_text("/etc/os-release"));
    if (e.os.empty()) e.os = os_pretty_name(read_text("/usr/lib/os-release"));
    if (e.os.empty()) e.os = "unknown";
    utsname u{};
    if (uname(&u) == 0)
        e.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
    else
        e.kernel = "unknown";
    e.cpu = cpu_model_name(read_text("/proc/cpuinfo"));
    if (e.cpu.empty()) e.cpu = "unknown";
    e.device = device;
    return e;
}

}  // namespace wb::runlog
