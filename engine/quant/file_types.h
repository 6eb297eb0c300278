#pragma once
// What `quantize --type` accepts: llama.cpp's file types (llama.h enum
// llama_ftype, written as general.file_type), each with the tensor type most
// weights get (llama-quant.cpp llama_ftype_get_default_type). Which tensors
// get other types is mix_rules.h's job.

#include <cstdint>
#include <string>
#include <vector>

#include "ggml/types.h"

namespace wb::quant {

/// A target file type; the value is llama.cpp's LLAMA_FTYPE_MOSTLY_* number.
enum class Target : uint32_t {
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q8_0 = 7,
    Q5_0 = 8,
    Q5_1 = 9,
    Q2_K = 10,
    Q3_K_S = 11,
    Q3_K_M = 12,
    Q3_K_L = 13,
    Q4_K_S = 14,
    Q4_K_M = 15,
    Q5_K_S = 16,
    Q5_K_M = 17,
    Q6_K = 18,
    IQ4_NL = 25,
};

/// One row of the file-type table.
struct TargetInfo {
    Target target;
    const char* name;         ///< "q4_k_m", as --type takes it
    const char* upper;        ///< "Q4_K_M", as users read it
    ggml::Type default_type;  ///< the type most weights get
    const char* summary;      ///< one line for menus: "4-bit K-quant mix, ..."
};

/// Every target, in the order menus list them (most bits first).
const std::vector<TargetInfo>& all_targets();
/// The row of `t`.
const TargetInfo& target_info(Target t);

/// Parses a target name ("q4_k_m", "Q4_K_M", ...; case-insensitive).
/// Throws std::invalid_argument listing the accepted names otherwise.
Target parse_target(const std::string& name);
/// "q4_k_m", "f16", ...
const char* target_name(Target t);
/// llama.cpp's LLAMA_FTYPE number of `t` (general.file_type).
uint32_t file_type_of(Target t);
/// ggml type id most weights of `t` get (ggml::Type as uint32).
uint32_t ggml_type_of(Target t);
/// The name of a general.file_type value as llama.cpp's llama_ftype
/// spells it without MOSTLY_ ("Q4_K_M", "F16", "F32" for ALL_F32, "IQ2_XXS",
/// ...; every file type llama.h defines, also those this quantizer does
/// not write), or "" for a value llama.h does not define.
std::string file_type_upper_name(int64_t ftype);

}  // namespace wb::quant
