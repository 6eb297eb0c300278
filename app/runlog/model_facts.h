#pragma once
// What the run log records about a model file, read from its GGUF header
// (ggml/docs/gguf.md "General metadata" and "LLM" keys) with
// wb::gguf::File. The SHA-256 is not part of this: RunLog computes it once
// and caches it by path + size + mtime.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace wb::runlog {

/// Facts of one GGUF model file.
struct ModelFacts {
    uint64_t file_size = 0;                       ///< bytes
    std::optional<std::string> name;              ///< general.name
    std::optional<std::string> architecture;      ///< general.architecture ("llama")
    std::optional<int64_t> file_type;             ///< general.file_type (llama_ftype id)
    std::optional<std::string> file_type_name;    ///< "MOSTLY_Q8_0" etc., from file_type
    std::map<std::string, int64_t> tensor_types;  ///< ggml type name -> tensor count
    int64_t n_params = 0;                         ///< sum of all tensors' element counts
    std::optional<int64_t> context_length;        ///< <architecture>.context_length (tokens)
    std::optional<std::string> tokenizer_model;   ///< tokenizer.ggml.model ("llama", "gpt2")
};

/// Reads the facts of the GGUF file at `path`. Throws gguf::Error for a
/// malformed file (message names the field and offset) and
/// std::runtime_error when the file cannot be read.
ModelFacts read_model_facts(const std::string& path);

/// llama.h `enum llama_ftype` name without the LLAMA_FTYPE_ prefix
/// ("ALL_F32", "MOSTLY_F16", "MOSTLY_Q4_K_M", ...), or "FTYPE_<id>" for an
/// id this table does not know. Bit 1024 (LLAMA_FTYPE_GUESSED) adds " (guessed)".
std::string file_type_name(int64_t id);

}  // namespace wb::runlog
