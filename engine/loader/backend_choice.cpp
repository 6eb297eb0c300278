#include "loader/backend_choice.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <new>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "loader/devices.h"
#include "loader/load.h"

namespace wb::model {

namespace {

std::string type_text(const std::string& slug) {
    if (slug == "discrete-gpu") return "discrete GPU";
    if (slug == "integrated-gpu") return "integrated GPU";
    if (slug == "virtual-gpu") return "virtual GPU";
    return "GPU";
}

// The device vk::choose_device picks with no selector, among the non-CPU ones.
const DeviceSummary* preferred_gpu(const std::vector<DeviceSummary>& devices) {
    for (const char* type : {"discrete-gpu", "integrated-gpu", "virtual-gpu"}) {
        for (const DeviceSummary& d : devices)
            if (d.type == type) return &d;
    }
    for (const DeviceSummary& d : devices)
        if (d.type != "cpu") return &d;
    return nullptr;
}

bool read_number(const std::filesystem::path& p, long long& out) {
    std::ifstream f(p);
    return static_cast<bool>(f >> out);
}

}  // namespace

BackendChoice choose_default_backend(const std::vector<DeviceSummary>& devices,
                                     unsigned physical_cores, const std::string& vulkan_error) {
    BackendChoice c;
    c.threads = std::max(physical_cores, 1u);
    if (const DeviceSummary* gpu = preferred_gpu(devices)) {
        c.backend = "vulkan";
        c.reason = "GPU found: " + gpu->name + " (" + type_text(gpu->type) + ") runs the model";
        return c;
    }
    c.backend = "cpu";
    if (devices.empty()) {
        c.reason = "no GPU found: there is no Vulkan device";
        if (!vulkan_error.empty()) c.reason += " (" + vulkan_error + ")";
        c.reason += "; the CPU backend runs the model";
    } else if (devices.size() == 1) {
        c.reason = "no GPU found: the only Vulkan device, " + devices[0].name +
                   ", is a CPU device; the CPU backend is faster there";
    } else {
        std::string names;
        for (const DeviceSummary& d : devices) names += (names.empty() ? "" : ", ") + d.name;
        c.reason = "no GPU found: every Vulkan device (" + names +
                   ") is a CPU device; the CPU backend is faster there";
    }
    return c;
}

unsigned physical_cores_in(const std::filesystem::path& cpu_dir) {
    std::set<std::pair<long long, long long>> cores;
    std::error_code ec;
    std::filesystem::directory_iterator it(cpu_dir, ec);
    if (ec) return 0;
    for (const std::filesystem::directory_entry& e : it) {
        const std::string name = e.path().filename().string();
        if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
            !std::all_of(name.begin() + 3, name.end(),
                         [](char ch) { return ch >= '0' && ch <= '9'; }))
            continue;
        long long package = 0, core = 0;
        if (!read_number(e.path() / "topology" / "physical_package_id", package) ||
            !read_number(e.path() / "topology" / "core_id", core))
            continue;
        cores.emplace(package, core);
    }
    return static_cast<unsigned>(cores.size());
}

unsigned physical_core_count() {
    unsigned n = physical_cores_in("/sys/devices/system/cpu");
    if (n == 0) n = std::thread::hardware_concurrency();
    return std::max(n, 1u);
}

BackendChoice detect_default_backend() {
    std::vector<DeviceSummary> devices;
    std::string error;
    if (!vulkan_built()) {
        error = "this build has no Vulkan backend (-DWB_VULKAN=OFF)";
    } else {
        try {
            for (const GpuDevice& d : list_gpu_devices()) devices.push_back({d.name, d.type_slug});
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& ex) {
            devices.clear();
            error = ex.what();
        }
    }
    return choose_default_backend(devices, physical_core_count(), error);
}

}  // namespace wb::model
