#include "runlog/model_facts.h"

#include <array>

#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::runlog {

std::string file_type_name(int64_t id) {
    // llama.h enum llama_ftype; ids 4-6 and 33-35 were removed from llama.cpp.
    static constexpr std::array<const char*, 38> kNames{
        "ALL_F32",       "MOSTLY_F16",    "MOSTLY_Q4_0",   "MOSTLY_Q4_1",    "MOSTLY_Q4_1_SOME_F16",
        nullptr,         nullptr,         "MOSTLY_Q8_0",   "MOSTLY_Q5_0",    "MOSTLY_Q5_1",
        "MOSTLY_Q2_K",   "MOSTLY_Q3_K_S", "MOSTLY_Q3_K_M", "MOSTLY_Q3_K_L",  "MOSTLY_Q4_K_S",
        "MOSTLY_Q4_K_M", "MOSTLY_Q5_K_S", "MOSTLY_Q5_K_M", "MOSTLY_Q6_K",    "MOSTLY_IQ2_XXS",
        "MOSTLY_IQ2_XS", "MOSTLY_Q2_K_S", "MOSTLY_IQ3_XS", "MOSTLY_IQ3_XXS", "MOSTLY_IQ1_S",
        "MOSTLY_IQ4_NL", "MOSTLY_IQ3_S",  "MOSTLY_IQ3_M",  "MOSTLY_IQ2_S",   "MOSTLY_IQ2_M",
        "MOSTLY_IQ4_XS", "MOSTLY_IQ1_M",  "MOSTLY_BF16",   nullptr,          nullptr,
        nullptr,         "MOSTLY_TQ1_0",  "MOSTLY_TQ2_0"};
    constexpr int64_t kGuessed = 1024;
    if (id >= kGuessed && id < 2 * kGuessed) return file_type_name(id - kGuessed) + " (guessed)";
    if (id >= 0 && id < static_cast<int64_t>(kNames.size()) && kNames[size_t(id)])
        return kNames[size_t(id)];
    return "FTYPE_" + std::to_string(id);
}

ModelFacts read_model_facts(const std::string& path) {
    const gguf::File f = gguf::File::open(path);
    ModelFacts m;
    m.file_size = f.file_size();
    m.name = f.get_string("general.name");
    m.architecture = f.get_string("general.architecture");
    m.file_type = f.get_int("general.file_type");
    if (m.file_type) m.file_type_name = file_type_name(*m.file_type);
    for (const gguf::TensorInfo& t : f.tensors()) {
        ++m.tensor_types[ggml::type_name(t.type)];
        m.n_params += static_cast<int64_t>(t.n_elements());
    }
    if (m.architecture) m.context_length = f.get_int(*m.architecture + ".context_length");
    m.tokenizer_model = f.get_string("tokenizer.ggml.model");
    return m;
}

}  // namespace wb::runlog
