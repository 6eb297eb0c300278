#pragma once
// What a GGUF file's quantization is, read from its header alone: the file
// type ("Q4_K_M"), the bits per weight, and how many tensors of each type
// it holds. Shown by `workbench-cli info`, the model bar and Compare.

#include <string>
#include <utility>
#include <vector>

namespace wb::gguf {
class File;
}

namespace wb::quant {

struct QuantizationInfo {
    /// general.file_type as llama.cpp names it ("Q4_K_M"), or, when the key
    /// is absent or unknown, the tensor type holding most bytes ("Q8_0").
    std::string file_type;
    bool file_type_from_key = false;  ///< file_type came from general.file_type
    /// Tensor data bytes * 8 / elements over all tensors, as llama.cpp's
    /// loader prints it (BPW); 0 for a file without tensors.
    double bpw = 0.0;
    /// (type, tensors of it), most tensors first, ties by name: "Q4_K" x13.
    std::vector<std::pair<std::string, int>> tensor_types;

    /// "Q4_K_M, 4.85 bpw" ("Q4_K_M" alone without tensors).
    std::string summary() const;
    /// "Q4_K x13, Q6_K x3, F32 x5".
    std::string tensor_types_text() const;
};

/// Reads the facts above from `f`. Never throws for absent keys; throws
/// gguf::Error when general.file_type has a non-integer type.
QuantizationInfo describe_quantization(const gguf::File& f);

}  // namespace wb::quant
