// `workbench-cli devices`: every Vulkan device with the capabilities the
// engine reads (never assumes) and picks shader variants from.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#if WB_HAVE_VULKAN
#include "exec/vk/context.h"
#include "exec/vk/device_info.h"
#endif

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

#if WB_HAVE_VULKAN
std::string mib(uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.0f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
    return s;
}

const char* yn(bool b) {
    return b ? "yes" : "no";
}
#endif

}  // namespace

int cmd_devices(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
#if !WB_HAVE_VULKAN
    std::printf("no Vulkan device (this build has no Vulkan backend: -DWB_VULKAN=OFF)\n");
    std::printf("default backend: %s\n", default_backend_line().c_str());
    return 0;
#else
    std::vector<vk::DeviceInfo> devs;
    try {
        devs = vk::list_devices();
    } catch (const std::exception& ex) {
        // No Vulkan loader or driver: the CPU backend still runs models.
        std::printf("no Vulkan device (%s)\n", ex.what());
    }
    if (devs.empty()) {
        std::printf("default backend: %s\n", default_backend_line().c_str());
        return 0;
    }
    const uint32_t chosen = vk::choose_device(devs, "");
    for (const vk::DeviceInfo& d : devs) {
        std::printf("%s%u: %s\n", d.index == chosen ? "*" : " ", d.index, d.name.c_str());
        std::printf("    type:                   %s\n", d.type_name().c_str());
        std::printf("    driver:                 %s %s (%s)\n", d.driver_name.c_str(),
                    d.driver_version_string().c_str(), d.driver_info.c_str());
        std::printf("    Vulkan:                 %s\n", d.api_version_string().c_str());
        for (size_t i = 0; i < d.heaps.size(); ++i) {
            std::printf("    heap %zu:                 %s%s\n", i, mib(d.heaps[i].size).c_str(),
                        d.heaps[i].device_local ? " (device local)" : "");
        }
        std::printf("    subgroup size:          %u\n", d.subgroup_size);
        std::printf("    subgroup arithmetic:    %s\n", yn(d.subgroup_arithmetic));
        std::printf("    max shared memory:      %u bytes\n", d.max_shared_memory);
        std::printf("    maxStorageBufferRange:  %u bytes (%s)\n", d.max_storage_buffer_range,
                    mib(d.max_storage_buffer_range).c_str());
        std::printf("    max workgroup size:     %u invocations\n", d.max_workgroup_invocations);
        std::printf("    16-bit storage:         %s\n", yn(d.storage_16bit));
        std::printf("    shaderFloat16:          %s\n", yn(d.shader_float16));
        std::printf("    8-bit storage:          %s\n", yn(d.storage_8bit));
        std::printf("    integer dot product:    %s\n", yn(d.integer_dot_product));
        std::printf("    cooperative matrix NV:  %s\n", yn(d.cooperative_matrix_nv));
        std::printf("    memory budget:          %s\n", yn(d.memory_budget));
        std::printf("    timestamps:             %s (%.3f ns/tick)\n", yn(d.timestamps),
                    static_cast<double>(d.timestamp_period_ns));
    }
    std::printf("default backend: %s\n", default_backend_line().c_str());
    return 0;
#endif
}

}  // namespace wb::cli
