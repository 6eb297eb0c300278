#include "runnable.h"

#include <exception>
#include <map>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "model/model_desc.h"
#include "tokenizer/vocab.h"

namespace wb::cli {

namespace {

// The engine's messages start with the file's path; the verdict is printed
// under the path already, so it is dropped there.
std::string without_path(const gguf::File& f, const std::string& msg) {
    const std::string prefix = f.path() + ": ";
    return msg.starts_with(prefix) ? msg.substr(prefix.size()) : msg;
}

// Tensors of one type the engine part cannot compute with.
struct TypeUse {
    size_t count = 0;
    std::string first;  // name of the first such tensor
};

std::string type_reason(uint32_t id, const TypeUse& u, ggml::Backend backend) {
    return "tensor type: " + ggml::type_upper_name(id) + " in " + std::to_string(u.count) +
           (u.count == 1 ? " tensor (" : " tensors (first: ") + u.first + "); supported" +
           (backend == ggml::Backend::Vulkan ? " on Vulkan" : "") + ": " +
           ggml::supported_type_names(backend);
}

}  // namespace

RunVerdict check_runnable(const gguf::File& f) {
    RunVerdict v;
    bool arch_ok = true;
    try {
        (void)model::HParams::from_gguf(f);
    } catch (const model::UnsupportedModel& e) {
        arch_ok = false;
        v.reasons.push_back("architecture: " + without_path(f, e.what()));
    } catch (const std::exception& e) {
        arch_ok = false;
        v.reasons.push_back("hyperparameters: " + without_path(f, e.what()));
    }
    try {
        (void)tokenizer::Vocab::from_gguf(f);
    } catch (const std::exception& e) {
        v.reasons.push_back("tokenizer: " + without_path(f, e.what()));
    }
    // Types by id, so a file of 200 IQ2_XS tensors reads as one line.
    std::map<uint32_t, TypeUse> cpu_missing, vk_missing;
    for (const gguf::TensorInfo& t : f.tensors()) {
        const ggml::TypeTraits* tr = ggml::type_traits(t.type);
        auto note = [&](std::map<uint32_t, TypeUse>& m) {
            TypeUse& u = m[t.type];
            if (u.count++ == 0) u.first = t.name;
        };
        if (!tr || !tr->computable)
            note(cpu_missing);
        else if (!tr->vulkan)
            note(vk_missing);
    }
    for (const auto& [id, u] : cpu_missing)
        v.reasons.push_back(type_reason(id, u, ggml::Backend::Cpu));
    for (const auto& [id, u] : vk_missing)
        v.vulkan_reasons.push_back(type_reason(id, u, ggml::Backend::Vulkan));
    // The weight table (missing, misshapen or extra tensors) only means
    // something once the architecture and every type are known.
    if (arch_ok && cpu_missing.empty()) {
        try {
            (void)model::ModelDesc::from_gguf(f);
        } catch (const std::exception& e) {
            v.reasons.push_back("weights: " + without_path(f, e.what()));
        }
    }
    return v;
}

std::string verdict_text(const RunVerdict& v, const std::string& indent) {
    // The threaded CPU executor computes every type the reference does
    // (types without a kernel through dequantized rows): one set for both.
    if (v.runs_vulkan()) {
        return "yes, on --backend cpu (threaded, quantized kernels), cpu-ref (f32 reference) and "
               "vulkan";
    }
    std::string s;
    const std::vector<std::string>& why = v.runs_cpu() ? v.vulkan_reasons : v.reasons;
    s = v.runs_cpu() ? "on --backend cpu (threaded, quantized kernels) and cpu-ref (f32 "
                       "reference) only; not on vulkan:"
                     : "no, this engine cannot run it:";
    for (const std::string& r : why) s += "\n" + indent + "- " + r;
    return s;
}

}  // namespace wb::cli
