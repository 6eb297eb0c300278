#include "exec/vk/pipeline.h"

#include <chrono>
#include <stdexcept>
#include <system_error>

#include "exec/vk/error.h"

namespace wb::vk {

CompileQueue::CompileQueue(unsigned threads)
    : threads_(std::max(1u, std::min(threads, 1024u))), slots_(threads_) {}

std::shared_future<void> CompileQueue::run(std::function<void()> job) {
    return std::async(std::launch::async,
                      [this, job = std::move(job)] {
                          slots_.acquire();
                          try {
                              job();
                          } catch (...) {
                              slots_.release();
                              throw;
                          }
                          slots_.release();
                      })
        .share();
}

Pipeline::Pipeline(Context& ctx, const PipelineDesc& desc, CompileQueue* queue)
    : ctx_(ctx), name_(desc.name), n_buffers_(desc.n_buffers), push_bytes_(desc.push_bytes) {
    if (desc.push_bytes > ctx.info().max_push_constants) {
        throw std::invalid_argument("pipeline " + desc.name + ": " +
                                    std::to_string(desc.push_bytes) +
                                    " bytes of push constants, device allows " +
                                    std::to_string(ctx.info().max_push_constants));
    }
    if (!desc.bindings.empty() && desc.bindings.size() != desc.n_buffers) {
        throw std::invalid_argument("pipeline " + desc.name + ": " +
                                    std::to_string(desc.bindings.size()) + " binding kinds for " +
                                    std::to_string(desc.n_buffers) + " buffers");
    }
    bindings_ = desc.bindings;
    bindings_.resize(desc.n_buffers, Binding::Storage);
    // Uniform texel buffers are read-only; storage buffers as the shader declares.
    access_ = spirv_binding_access(desc.spirv, desc.spirv_bytes, desc.n_buffers);
    for (uint32_t i = 0; i < desc.n_buffers; ++i)
        if (bindings_[i] != Binding::Storage) access_[i] = BindingAccess{true, false};
    VkDevice dev = ctx.device();
    try {
        VkShaderModuleCreateInfo smi{};
        smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        smi.codeSize = desc.spirv_bytes;
        smi.pCode = desc.spirv;
        check(vkCreateShaderModule(dev, &smi, nullptr, &module_), "vkCreateShaderModule");

        std::vector<VkDescriptorSetLayoutBinding> bindings(desc.n_buffers);
        for (uint32_t i = 0; i < desc.n_buffers; ++i) {
            bindings[i] = {};
            bindings[i].binding = i;
            bindings[i].descriptorType = bindings_[i] == Binding::Storage
                                             ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                             : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            bindings[i].descriptorCount = 1;
            bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        }
        VkDescriptorSetLayoutCreateInfo dli{};
        dli.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
        dli.bindingCount = desc.n_buffers;
        dli.pBindings = bindings.data();
        check(vkCreateDescriptorSetLayout(dev, &dli, nullptr, &set_layout_),
              "vkCreateDescriptorSetLayout");

        VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_bytes};
        VkPipelineLayoutCreateInfo pli{};
        pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
        pli.setLayoutCount = 1;
        pli.pSetLayouts = &set_layout_;
        pli.pushConstantRangeCount = desc.push_bytes ? 1 : 0;
        pli.pPushConstantRanges = desc.push_bytes ? &pcr : nullptr;
        check(vkCreatePipelineLayout(dev, &pli, nullptr, &layout_), "vkCreatePipelineLayout");

        bool queued = false;
        if (queue) {
            try {
                compiled_ = queue->run([this, spec = desc.spec] { compile(spec); });
                queued = true;
            } catch (const std::system_error&) {
                // No thread to be had (a process at its thread limit): compile
                // here, slower to start but the same pipeline.
            }
        }
        if (!queued) compile(desc.spec);
    } catch (...) {
        destroy();
        throw;
    }
}

void Pipeline::compile(std::vector<uint32_t> spec) {
    const auto t0 = std::chrono::steady_clock::now();
    VkDevice dev = ctx_.device();
    std::vector<VkSpecializationMapEntry> entries(spec.size());
    for (uint32_t i = 0; i < spec.size(); ++i) {
        entries[i] = {i, i * 4u, 4u};
    }
    VkSpecializationInfo si{};
    si.mapEntryCount = static_cast<uint32_t>(entries.size());
    si.pMapEntries = entries.data();
    si.dataSize = spec.size() * 4;
    si.pData = spec.data();

    VkComputePipelineCreateInfo cpi{};
    cpi.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module_;
    cpi.stage.pName = "main";
    cpi.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
    cpi.layout = layout_;
    const VkResult r =
        vkCreateComputePipelines(dev, ctx_.pipeline_cache(), 1, &cpi, nullptr, &pipeline_);
    if (r != VK_SUCCESS)
        throw Error("vkCreateComputePipelines(" + name_ + "): " + result_name(r), r);
    compile_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

VkPipeline Pipeline::handle() const {
    if (compiled_.valid() && !done_.load(std::memory_order_acquire)) {
        if (compiled_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            const auto t0 = std::chrono::steady_clock::now();
            compiled_.wait();
            waited_ms_.fetch_add(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
        }
        compiled_.get();  // rethrows the compile's error
        done_.store(true, std::memory_order_release);
    }
    return pipeline_;
}

bool Pipeline::ready() const {
    return !compiled_.valid() || done_.load(std::memory_order_acquire) ||
           compiled_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

Pipeline::~Pipeline() {
    destroy();
}

void Pipeline::destroy() {
    // A queued compile still uses the module and layout: let it finish.
    if (compiled_.valid()) compiled_.wait();
    VkDevice dev = ctx_.device();
    if (pipeline_) vkDestroyPipeline(dev, pipeline_, nullptr);
    if (layout_) vkDestroyPipelineLayout(dev, layout_, nullptr);
    if (set_layout_) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
    if (module_) vkDestroyShaderModule(dev, module_, nullptr);
    pipeline_ = VK_NULL_HANDLE;
    layout_ = VK_NULL_HANDLE;
    set_layout_ = VK_NULL_HANDLE;
    module_ = VK_NULL_HANDLE;
}

}  // namespace wb::vk
