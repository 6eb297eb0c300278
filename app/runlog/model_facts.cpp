#include "runlog/model_facts.h"

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "quant/file_types.h"

namespace wb::runlog {

std::string file_type_name(int64_t id) {
    // One table of llama_ftype names (quant::file_type_upper_name); the run
    // log keeps llama.h's full enumerator spelling: ALL_F32, MOSTLY_<type>.
    constexpr int64_t kGuessed = 1024;
    if (id >= kGuessed && id < 2 * kGuessed) return file_type_name(id - kGuessed) + " (guessed)";
    const std::string upper = quant::file_type_upper_name(id);
    if (upper.empty()) return "FTYPE_" + std::to_string(id);
    return (id == 0 ? "ALL_" : "MOSTLY_") + upper;
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
