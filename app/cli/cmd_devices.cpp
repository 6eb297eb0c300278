// `workbench-cli devices`: every Vulkan device with the capabilities the
// engine reads (never assumes) and picks shader variants from.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "loader/devices.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "devices",
    "",
    "List the Vulkan devices and their capabilities.",
    "For each device: name, type, driver and version, Vulkan version, memory heaps,\n"
    "subgroup size and arithmetic, max shared memory, maxStorageBufferRange, and whether it has\n"
    "16-bit storage, shaderFloat16, 8-bit storage, integer dot product, cooperative\n"
    "matrix (NV), memory budget and timestamps. The device marked * is the default\n"
    "Vulkan device (first discrete GPU, else integrated, else CPU); --device picks\n"
    "another by index or name substring in generate, info and bench. The last line\n"
    "names the backend generate, batch, bench and compare use without --backend,\n"
    "and why: vulkan when a device is a GPU, else cpu (the threaded CPU executor,\n"
    "one thread per physical core), also when there is no Vulkan device at all.",
    {},
    0,
    0,
};

std::string mib(uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.0f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
    return s;
}

/// "    label:" padded to the value column.
void line(const std::string& label, const std::string& value) {
    std::printf("    %-24s%s\n", (label + ":").c_str(), value.c_str());
}

const char* yn(bool b) {
    return b ? "yes" : "no";
}

/// The capabilities after the heaps, one line each.
void capability_lines(const model::GpuDevice& d) {
    line("subgroup size", std::to_string(d.subgroup_size));
    line("subgroup arithmetic", yn(d.subgroup_arithmetic));
    line("max shared memory", std::to_string(d.max_shared_memory) + " bytes");
    line("maxStorageBufferRange", std::to_string(d.max_storage_buffer_range) + " bytes (" +
                                      mib(d.max_storage_buffer_range) + ")");
    line("max workgroup size", std::to_string(d.max_workgroup_invocations) + " invocations");
    line("16-bit storage", yn(d.storage_16bit));
    line("shaderFloat16", yn(d.shader_float16));
    line("8-bit storage", yn(d.storage_8bit));
    line("integer dot product", yn(d.integer_dot_product));
    line("cooperative matrix NV", yn(d.cooperative_matrix_nv));
    line("memory budget", yn(d.memory_budget));
    char ts[64];
    std::snprintf(ts, sizeof ts, "%s (%.3f ns/tick)", yn(d.timestamps), d.timestamp_period_ns);
    line("timestamps", ts);
}

}  // namespace

int cmd_devices(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    std::vector<model::GpuDevice> devs;
    try {
        devs = model::list_gpu_devices();
    } catch (const std::exception& ex) {
        // No Vulkan loader or driver, or a build without the Vulkan
        // backend: the CPU backend still runs models.
        std::printf("no Vulkan device (%s)\n", ex.what());
    }
    if (devs.empty()) {
        std::printf("default backend: %s\n", default_backend_line().c_str());
        return 0;
    }
    const uint32_t chosen = model::choose_gpu_device(devs, "");
    for (const model::GpuDevice& d : devs) {
        std::printf("%s%u: %s\n", d.index == chosen ? "*" : " ", d.index, d.name.c_str());
        line("type", d.type_name);
        line("driver", d.driver_name + " " + d.driver_version + " (" + d.driver_info + ")");
        line("Vulkan", d.api_version);
        for (size_t i = 0; i < d.heaps.size(); ++i) {
            line("heap " + std::to_string(i),
                 mib(d.heaps[i].bytes) + (d.heaps[i].device_local ? " (device local)" : ""));
        }
        capability_lines(d);
    }
    std::printf("default backend: %s\n", default_backend_line().c_str());
    return 0;
}

}  // namespace wb::cli
