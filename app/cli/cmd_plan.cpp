// `workbench-cli plan [MODEL]`: what a model needs in device memory for a
// context, a number of parallel sequences and a KV cache type, by purpose
// (weights, KV cache, activations, staging), whether that fits each visible
// Vulkan device and common GPU sizes, and the largest context that does.
// The figures are the memory planner's (engine/model/memory_plan.h): the
// bytes the Vulkan engine allocates for the same settings.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "gguf/gguf.h"
#include "loader/devices.h"
#include "model/host_memory.h"
#include "model/memory_plan.h"
#include "model/model_desc.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "plan",
    "[MODEL]",
    "Show the device memory a model needs and the largest context that fits.",
    "MODEL is a GGUF file (default: the bundled stories260K.gguf), or give a\n"
    "named shape with --shape (1B, 3B: Llama 3.2; 7B, 13B: Llama 2; 8B, 70B:\n"
    "Llama 3.1) and its file type with --type, as `quantize --type` takes it\n"
    "(q4_k_m, q4_0, q3_k_l, q8_0, f16, ...: llama-quantize's tensor-type mix;\n"
    "--pure for one type in every matrix; a ggml type such as q4_k or bf16 for\n"
    "every matrix). -c, --parallel and --kv-type mean what they mean in `batch`\n"
    "and `generate`: one KV pool of -c tokens shared by --parallel sequences,\n"
    "so the plan equals what `batch -c N --concurrency P` allocates on Vulkan.\n"
    "'fits' compares the total with each visible Vulkan device's largest\n"
    "device-local heap and with common GPU memory sizes; other programs' use\n"
    "of the device is not counted.",
    {
        {"model", 'm', "FILE", "model file (alternative to the MODEL argument)"},
        {"shape", 0, "NAME", "plan a named model shape instead of a file: 1B 3B 7B 8B 13B 70B"},
        {"type", 0, "TYPE", "file type of --shape, as quantize --type (default: f16)"},
        {"pure", 0, "", "with --type: that type in every matrix (llama-quantize --pure)"},
        {"ctx-size", 'c', "N",
         "KV pool size in tokens, shared by the sequences (default: training context, at most "
         "4096, times --parallel)"},
        {"parallel", 0, "N", "sequences decoded at once (default: 1)"},
        kv_type_option(),
        {"ubatch", 0, "N", "tokens of the largest ubatch (default: 512)"},
        {"backend", 0, "NAME",
         std::string("plan for cpu (host memory of the threaded CPU backend) or vulkan (device "
                     "memory) (") +
             kDefaultBackendHelp + ")"},
        {"json", 0, "", "print the plan as one JSON object"},
    },
    0,
    1,
};

std::string gib(uint64_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (uint64_t{1} << 30));
    return buf;
}

std::string mib(uint64_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (uint64_t{1} << 20));
    return buf;
}

/// One line of the fit table.
void fit_line(const std::string& name, uint64_t budget, const model::ModelDesc& d,
              const model::ContextParams& cp, const model::PlanShape& shape,
              const model::GpuDevice& dev, uint32_t parallel) {
    bool fits = false;
    try {
        fits = model::plan_gpu_memory(d, cp, shape, dev).total() <= budget;
    } catch (const std::invalid_argument&) {
        fits = false;  // a span this device cannot compute
    }
    const uint32_t cells = model::largest_gpu_context(d, cp, shape, dev, budget, uint32_t{1} << 24);
    std::printf("  %-44s %10s  %-8s largest pool %u tokens (%u per sequence of %u)\n", name.c_str(),
                gib(budget).c_str(), fits ? "fits" : "too big", cells, cells / parallel, parallel);
}

}  // namespace

int cmd_plan(const std::vector<std::string>& argv) {
    ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const uint32_t parallel = static_cast<uint32_t>(args.get_int("parallel", 1, 1, 4096));
    const model::KvType kv_type = kv_type_from_args(args);
    const std::string kv_name = model::kv_type_name(kv_type);
    const bool as_json = args.has("json");
    const std::string backend =
        args.has("backend") ? *args.get("backend") : default_backend().backend;
    if (backend != "cpu" && backend != "vulkan")
        throw UsageError("--backend: '" + backend + "' is not cpu or vulkan");
    const bool host = backend == "cpu";
    if (args.has("pure") && !args.get("shape"))
        throw UsageError("--pure applies to --shape with --type");
    model::PlanShape shape;
    shape.n_ubatch = static_cast<uint32_t>(args.get_int("ubatch", 512, 1, 1 << 16));

    model::ModelDesc d;
    std::string what;
    if (std::optional<std::string> sname = args.get("shape")) {
        if (args.get("model") || !args.positional.empty())
            throw UsageError("plan: give either a MODEL file or --shape, not both");
        const model::NamedShape* s = model::find_named_shape(*sname);
        if (!s) throw UsageError("--shape: '" + *sname + "' is not one of 1B 3B 7B 8B 13B 70B");
        const std::string type = args.get("type").value_or("f16");
        try {
            d = model::shape_desc(*s, type, args.has("pure"));
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--type: ") + e.what());
        }
        what = s->name + " (" + s->like + " shape), " + (args.has("pure") ? "pure " : "") + type;
    } else {
        if (args.get("type")) throw UsageError("--type applies to --shape only");
        std::optional<std::string> given = args.get("model");
        if (!args.positional.empty()) {
            if (given)
                throw UsageError("plan: give the model either as MODEL or with -m, not both");
            given = args.positional[0];
        }
        const std::string path = resolve_model_path(given);
        const gguf::File f = gguf::File::open(path);
        d = model::ModelDesc::from_gguf(f);
        what = path + " (" + d.hp.arch + ")";
    }
    // batch's rule: one pool, by default room for each sequence's default context.
    model::ContextParams cp;
    cp.n_ctx = static_cast<uint32_t>(args.get_int(
        "ctx-size", pool_for(default_context(d.hp.n_ctx_train), parallel), 1, int64_t{1} << 24));
    cp.n_seq_max = parallel;
    cp.kv_type = kv_type;

    uint64_t params = 0;
    for (const model::TensorRef& t : d.tensors) params += t.ne0 * t.ne1;
    const model::GpuDevice gpu = model::GpuDevice::typical_discrete();
    const model::MemoryNeed need =
        host ? model::plan_memory_host(d, cp) : model::plan_gpu_memory(d, cp, shape, gpu);
    if (as_json) {
        const nlohmann::json j = {{"model", what},
                                  {"backend", backend},
                                  {"n_ctx", cp.n_ctx},
                                  {"n_parallel", cp.n_seq_max},
                                  {"kv_type", kv_name},
                                  {"n_ubatch", shape.n_ubatch},
                                  {"parameters", params},
                                  {"weights", need.weights},
                                  {"kv_cache", need.kv_cache},
                                  {"activations", need.activations},
                                  {"staging", need.staging},
                                  {"total", need.total()}};
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }
    std::printf("model:        %s\n", what.c_str());
    std::printf("parameters:   %.3g (%u layers, n_embd %u, %u heads, %u KV heads, head_dim %u)\n",
                static_cast<double>(params), d.hp.n_layer, d.hp.n_embd, d.hp.n_head, d.hp.n_head_kv,
                d.hp.head_dim);
    std::printf(
        "context:      one pool of %u KV cells shared by %u sequence%s, %s KV cache, "
        "ubatch %u\n",
        cp.n_ctx, parallel, parallel == 1 ? "" : "s", kv_name.c_str(), shape.n_ubatch);
    std::printf("backend:      %s\n",
                host ? "cpu (host memory; the weights are read in place from the file's mapping, "
                       "activations not counted)"
                     : "vulkan (device memory)");
    std::printf("weights:      %15" PRIu64 " bytes  %s\n", need.weights, gib(need.weights).c_str());
    std::printf("kv cache:     %15" PRIu64 " bytes  %s\n", need.kv_cache,
                gib(need.kv_cache).c_str());
    std::printf("activations:  %15" PRIu64 " bytes  %s\n", need.activations,
                mib(need.activations).c_str());
    std::printf("staging:      %15" PRIu64 " bytes  %s\n", need.staging, mib(need.staging).c_str());
    std::printf("total:        %15" PRIu64 " bytes  %s\n", need.total(), gib(need.total()).c_str());
    if (host) {
        if (const std::optional<model::HostMemory> hm = model::host_memory_available()) {
            std::printf("\nhost memory available: %s (%s): %s\n",
                        model::format_bytes(hm->bytes).c_str(), hm->source.c_str(),
                        need.total() <= hm->bytes ? "fits" : "too big");
        }
        return 0;
    }

    std::printf("\nvisible devices:\n");
    try {
        for (const model::GpuDevice& dev : model::list_gpu_devices()) {
            fit_line(std::to_string(dev.index) + ": " + dev.name, dev.largest_device_local_heap(),
                     d, cp, shape, dev, parallel);
        }
    } catch (const std::exception& e) {
        std::printf("  none usable (%s)\n", e.what());
    }
    std::printf("common GPU memory sizes:\n");
    for (uint32_t g : {8u, 12u, 16u, 24u, 48u, 80u, 141u}) {
        fit_line(std::to_string(g) + " GiB GPU", uint64_t{g} << 30, d, cp, shape, gpu, parallel);
    }
    return 0;
}

}  // namespace wb::cli
