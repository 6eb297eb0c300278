#include "quant/file_types.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace wb::quant {

using ggml::Type;

const std::vector<TargetInfo>& all_targets() {
    static const std::vector<TargetInfo> t = {
        {Target::F16, "f16", "F16", Type::F16, "16-bit floats, no quantization"},
        {Target::Q8_0, "q8_0", "Q8_0", Type::Q8_0, "8-bit, blocks of 32"},
        {Target::Q6_K, "q6_k", "Q6_K", Type::Q6_K, "6-bit K-quant"},
        {Target::Q5_K_M, "q5_k_m", "Q5_K_M", Type::Q5_K,
         "5-bit K-quant mix (Q6_K for output, some attn_v/ffn_down)"},
        {Target::Q5_K_S, "q5_k_s", "Q5_K_S", Type::Q5_K, "5-bit K-quant"},
        {Target::Q5_1, "q5_1", "Q5_1", Type::Q5_1, "5-bit with offset, blocks of 32"},
        {Target::Q5_0, "q5_0", "Q5_0", Type::Q5_0, "5-bit, blocks of 32"},
        {Target::Q4_K_M, "q4_k_m", "Q4_K_M", Type::Q4_K,
         "4-bit K-quant mix (Q6_K for output, some attn_v/ffn_down)"},
        {Target::Q4_K_S, "q4_k_s", "Q4_K_S", Type::Q4_K, "4-bit K-quant (Q5_K for some attn_v)"},
        {Target::Q4_1, "q4_1", "Q4_1", Type::Q4_1, "4-bit with offset, blocks of 32"},
        {Target::IQ4_NL, "iq4_nl", "IQ4_NL", Type::IQ4_NL, "4-bit non-linear, blocks of 32"},
        {Target::Q4_0, "q4_0", "Q4_0", Type::Q4_0, "4-bit, blocks of 32"},
        {Target::Q3_K_L, "q3_k_l", "Q3_K_L", Type::Q3_K, "3-bit K-quant mix (Q5_K for attention)"},
        {Target::Q3_K_M, "q3_k_m", "Q3_K_M", Type::Q3_K,
         "3-bit K-quant mix (Q4_K/Q5_K for attention)"},
        {Target::Q3_K_S, "q3_k_s", "Q3_K_S", Type::Q3_K, "3-bit K-quant"},
        {Target::Q2_K, "q2_k", "Q2_K", Type::Q2_K, "2-bit K-quant mix (Q3_K/Q4_K for attention)"},
    };
    return t;
}

const TargetInfo& target_info(Target t) {
    for (const TargetInfo& i : all_targets())
        if (i.target == t) return i;
    throw std::invalid_argument("unknown quantization target " +
                                std::to_string(static_cast<uint32_t>(t)));
}

Target parse_target(const std::string& name) {
    std::string s = name;
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string accepted;
    for (const TargetInfo& i : all_targets()) {
        if (s == i.name) return i.target;
        accepted += (accepted.empty() ? "" : ", ") + std::string(i.name);
    }
    throw std::invalid_argument("unknown quantization type '" + name + "' (accepted: " + accepted +
                                ")");
}

const char* target_name(Target t) {
    return target_info(t).name;
}

uint32_t file_type_of(Target t) {
    return static_cast<uint32_t>(t);
}

uint32_t ggml_type_of(Target t) {
    return static_cast<uint32_t>(target_info(t).default_type);
}

std::string file_type_upper_name(int64_t ftype) {
    // llama.h enum llama_ftype: the project's one table of its names (the
    // run log prefixes them as llama.h does). Id 4 is commented out in
    // llama.h but old files carry it; 5 and 6 were removed.
    static const std::pair<int64_t, const char*> kNames[] = {
        {0, "F32"},     {1, "F16"},      {2, "Q4_0"},     {3, "Q4_1"},       {4, "Q4_1_SOME_F16"},
        {7, "Q8_0"},    {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},      {11, "Q3_K_S"},
        {12, "Q3_K_M"}, {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},    {16, "Q5_K_S"},
        {17, "Q5_K_M"}, {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},    {21, "Q2_K_S"},
        {22, "IQ3_XS"}, {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},    {26, "IQ3_S"},
        {27, "IQ3_M"},  {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},    {31, "IQ1_M"},
        {32, "BF16"},   {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"},
    };
    for (const auto& [id, name] : kNames)
        if (id == ftype) return name;
    return "";
}

}  // namespace wb::quant
