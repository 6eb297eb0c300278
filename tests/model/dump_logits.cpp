// dump_logits MODEL BACKEND ID...: runs the token ids as one ubatch at
// positions 0..n-1 (F32 KV cache, 512 cells) on BACKEND ("cpu" or
// "vulkan", validation layer on) and writes the logits of every position to
// stdout as [n, n_vocab] float32 little-endian. For numpy_reference.py,
// which checks them against its own float64 forward pass. Exit 1 with a
// message on stderr for any error (2 for a validation-layer message).

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "exec/ref/ref_model.h"
#include "exec/vk/vk_model.h"
#include "gguf/gguf.h"

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: dump_logits MODEL cpu|vulkan ID...\n");
        return 1;
    }
    try {
        const wb::gguf::File f = wb::gguf::File::open(argv[1]);
        wb::model::ContextParams cp;
        cp.n_ctx = 512;
        cp.kv_type = wb::model::KvType::F32;
        std::unique_ptr<wb::model::Model> m;
        wb::model::VkModel* vk = nullptr;
        if (std::string(argv[2]) == "cpu") {
            m = std::make_unique<wb::model::RefModel>(f, cp);
        } else {
            wb::model::VkModelOptions o;
            o.device.validation = true;
            o.device.pipeline_cache = false;
            auto v = std::make_unique<wb::model::VkModel>(f, cp, o);
            vk = v.get();
            m = std::move(v);
        }
        wb::model::Batch b;
        for (int i = 3; i < argc; ++i) b.add(std::atoi(argv[i]), i - 3, 0, true);
        std::vector<float> logits;
        m->decode(b, logits);
        if (vk && vk->validation() && vk->validation()->errors()) {
            for (const auto& s : vk->validation()->messages())
                std::fprintf(stderr, "%s\n", s.c_str());
            return 2;
        }
        std::fwrite(logits.data(), sizeof(float), logits.size(), stdout);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dump_logits: %s\n", e.what());
        return 1;
    }
}
