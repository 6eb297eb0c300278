#include "quant/mix_rules.h"

#include <cstdio>

#include "gguf/gguf.h"

namespace wb::quant {

using ggml::Type;

namespace {

enum class Category {
    TokenEmbd,
    AttnQ,
    AttnV,
    AttnK,
    AttnQkv,
    AttnKvB,
    AttnOut,
    FfnUp,
    FfnGate,
    FfnDown,
    Output,
    Other
};

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

// llama-quant.cpp tensor_get_category (broad categories by name).
Category category_of(const std::string& n) {
    if (n == "output.weight") return Category::Output;
    if (n == "token_embd.weight" || n == "per_layer_token_embd.weight") return Category::TokenEmbd;
    if (contains(n, "attn_qkv.weight")) return Category::AttnQkv;
    if (contains(n, "attn_kv_b.weight")) return Category::AttnKvB;
    if (contains(n, "attn_v.weight")) return Category::AttnV;
    if (contains(n, "attn_k.weight")) return Category::AttnK;
    if (contains(n, "attn_q.weight")) return Category::AttnQ;
    if (contains(n, "attn_output.weight")) return Category::AttnOut;
    if (contains(n, "ffn_up")) return Category::FfnUp;
    if (contains(n, "ffn_gate")) return Category::FfnGate;
    if (contains(n, "ffn_down")) return Category::FfnDown;
    return Category::Other;
}

bool is_attn_v(Category c) {
    return c == Category::AttnV || c == Category::AttnQkv || c == Category::AttnKvB;
}

// llama-quant.cpp tensor_allows_quantization (the names that concern the
// architectures a GGUF may hold; none of our targets quantizes 1-D tensors).
bool allows_quantization(const MixTensor& t) {
    if (t.n_dims < 2) return false;
    const std::string& n = t.name;
    bool q = n.size() >= 6 && n.compare(n.size() - 6, 6, "weight") == 0;
    for (const char* skip : {"_norm.weight",
                             "ffn_gate_inp.weight",
                             "ffn_gate_tid2eid.weight",
                             "altup",
                             "laurel",
                             "per_layer_model_proj",
                             "ssm_conv1d",
                             "shortconv.conv.weight",
                             "indexer.k_proj.weight",
                             "indexer.q_proj.weight",
                             "time_mix_first.weight",
                             "time_mix_w0.weight",
                             "time_mix_w1.weight",
                             "time_mix_w2.weight",
                             "time_mix_v0.weight",
                             "time_mix_v1.weight",
                             "time_mix_v2.weight",
                             "time_mix_a0.weight",
                             "time_mix_a1.weight",
                             "time_mix_a2.weight",
                             "time_mix_g1.weight",
                             "time_mix_g2.weight",
                             "time_mix_decay_w1.weight",
                             "time_mix_decay_w2.weight",
                             "time_mix_lerp_fused.weight",
                             "attn_rel_b.weight",
                             ".position_embd",
                             "sam.pos_embd",
                             "sam.neck.",
                             "sam.net_",
                             ".rel_pos",
                             ".patch_embd",
                             ".patch_merger",
                             "a.rvq.codebook",
                             "mm.a.code_embd"}) {
        q = q && !contains(n, skip);
    }
    q = q && n != "position_embd.weight" && n != "token_types.weight";
    return q;
}

bool is_quantized(Type t) {
    return ggml::type_traits(t)->block_size > 1;
}

uint32_t block_of(Type t) {
    return ggml::type_traits(t)->block_size;
}

std::string upper(Type t) {
    return ggml::type_traits(t)->upper;
}

// The first and last eighth of the layers and every third one between.
bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
           (i_layer - n_layers / 8) % 3 == 2;
}

struct State {
    int n_attention_wv = 0, n_layer = 0;
    int i_attention_wv = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
    bool tied = true;  // until output.weight is seen
};

// The layer number of "blk.N." (MoE models count experts by name).
int layer_of_name(const std::string& n, int fallback) {
    int l = 0;
    return std::sscanf(n.c_str(), "blk.%d.", &l) == 1 ? l : fallback;
}

// llama_tensor_get_type_impl for the targets we write; `why` gets the rule.
Type mix_type(State& qs, const MixModel& m, const MixTensor& t, Category cat, Target ft, Type type,
              std::string& why) {
    const bool falcon = m.arch == "falcon";
    const uint32_t gqa = m.n_gqa();
    const bool is_70b = m.arch == "llama" && m.n_layer == 80 && m.n_head != m.n_head_kv;
    auto layer = [&](int counter) {
        return m.n_expert > 1 ? layer_of_name(t.name, counter) : counter;
    };
    auto set = [&](Type to, const std::string& rule) {
        if (to != type) why = rule;
        type = to;
    };

    if (cat == Category::Output || (qs.tied && cat == Category::TokenEmbd)) {
        const std::string what =
            cat == Category::Output ? "output tensor" : "tied token embeddings";
        if (falcon || t.ne0 % block_of(type) != 0) {
            set(Type::Q8_0, what + ", rows not a multiple of " + upper(type) + "'s block");
        } else if (type != Type::Q8_0) {
            set(Type::Q6_K, what);
        }
    } else if (is_attn_v(cat)) {
        const std::string what = cat == Category::AttnV ? "attn_v" : "fused attn_qkv (as attn_v)";
        const std::string nth = " #" + std::to_string(qs.i_attention_wv + 1) + " of " +
                                std::to_string(qs.n_attention_wv);
        if (ft == Target::Q2_K) {
            set(gqa >= 4 ? Type::Q4_K : Type::Q3_K,
                what + (gqa >= 4 ? " with >= 4 query heads per KV head" : ""));
        } else if (ft == Target::Q3_K_M) {
            set(qs.i_attention_wv < 2 ? Type::Q5_K : Type::Q4_K, what + nth);
        } else if (ft == Target::Q3_K_L) {
            set(Type::Q5_K, what);
        } else if (ft == Target::IQ4_NL && gqa >= 4) {
            set(Type::Q5_K, what + " with >= 4 query heads per KV head");
        } else if ((ft == Target::Q4_K_M || ft == Target::Q5_K_M) &&
                   use_more_bits(qs.i_attention_wv, qs.n_attention_wv)) {
            set(Type::Q6_K, what + nth + " (use_more_bits)");
        } else if (ft == Target::Q4_K_S && qs.i_attention_wv < 4) {
            set(Type::Q5_K, what + nth);
        }
        if (is_70b && (type == Type::Q3_K || type == Type::Q4_K))
            set(Type::Q5_K, what + " of a 70B model");
        if (m.n_expert == 8) set(Type::Q8_0, what + " of an 8-expert model");
        ++qs.i_attention_wv;
    } else if (cat == Category::AttnK) {
        if (m.n_expert == 8) set(Type::Q8_0, "attn_k of an 8-expert model");
    } else if (cat == Category::FfnDown) {
        const int i_layer = layer(qs.i_ffn_down), n_layer = qs.n_layer;
        const std::string at = "ffn_down of layer " + std::to_string(i_layer);
        if (ft == Target::Q2_K) {
            set(Type::Q3_K, at);
        } else if (ft == Target::Q3_K_M) {
            set(i_layer < n_layer / 16                       ? Type::Q5_K
                : !falcon || use_more_bits(i_layer, n_layer) ? Type::Q4_K
                                                             : Type::Q3_K,
                at);
        } else if (ft == Target::Q3_K_L) {
            set(falcon ? Type::Q4_K : Type::Q5_K, at);
        } else if (ft == Target::Q4_K_M) {
            if (falcon) {
                set(i_layer < n_layer / 16            ? Type::Q6_K
                    : use_more_bits(i_layer, n_layer) ? Type::Q5_K
                                                      : Type::Q4_K,
                    at);
            } else if (use_more_bits(i_layer, n_layer)) {
                set(Type::Q6_K, at + " (use_more_bits)");
            }
        } else if (i_layer < n_layer / 8 && ft == Target::IQ4_NL) {
            set(Type::Q5_K, at + " (first eighth)");
        } else if (ft == Target::Q5_K_M && use_more_bits(i_layer, n_layer)) {
            set(Type::Q6_K, at + " (use_more_bits)");
        } else if (ft == Target::Q4_K_S && !falcon && i_layer < n_layer / 8) {
            set(Type::Q5_K, at + " (first eighth)");
        }
        ++qs.i_ffn_down;
    } else if (cat == Category::AttnOut) {
        if (!falcon) {
            if (m.n_expert == 8) {
                if (ft == Target::Q2_K || ft == Target::Q3_K_S || ft == Target::Q3_K_M ||
                    ft == Target::IQ4_NL || ft == Target::Q4_K_S || ft == Target::Q4_K_M) {
                    set(Type::Q5_K, "attn_output of an 8-expert model");
                }
            } else if (ft == Target::Q2_K) {
                set(Type::Q3_K, "attn_output");
            } else if (ft == Target::Q3_K_M) {
                set(Type::Q4_K, "attn_output");
            } else if (ft == Target::Q3_K_L) {
                set(Type::Q5_K, "attn_output");
            }
        } else if (ft == Target::Q3_K_L) {
            set(Type::Q4_K, "attn_output");
        }
    } else if (cat == Category::AttnQkv) {
        // (unreachable: fused QKV counts as attn_v above, as in llama.cpp)
    } else if (cat == Category::FfnGate) {
        ++qs.i_ffn_gate;
    } else if (cat == Category::FfnUp) {
        ++qs.i_ffn_up;
    }
    return type;
}

// tensor_type_fallback: a type whose block does not divide the row length.
Type fallback(const MixTensor& t, Type type, std::string& why) {
    if (t.ne0 % block_of(type) == 0) return type;
    Type to = Type::F16;
    switch (type) {
        case Type::Q2_K:
        case Type::Q3_K:
            to = Type::Q4_0;
            break;
        case Type::Q4_K:
            to = Type::Q5_0;
            break;
        case Type::Q5_K:
            to = Type::Q5_1;
            break;
        case Type::Q6_K:
            to = Type::Q8_0;
            break;
        default:
            break;  // llama-quantize stops here ("no tensor type fallback"); we write F16
    }
    if (t.ne0 % block_of(to) != 0) to = Type::F16;
    const std::string rule = "row length " + std::to_string(t.ne0) + " is not a multiple of " +
                             upper(type) + "'s block of " + std::to_string(block_of(type)) +
                             (to == Type::F16 ? ", written as F16" : ", fell back to " + upper(to));
    why = why.empty() ? rule : why + "; " + rule;
    return to;
}

}  // namespace

MixModel MixModel::from_gguf(const gguf::File& f) {
    MixModel m;
    m.arch = f.get_string("general.architecture").value_or("");
    auto u32 = [&](const std::string& key) -> uint32_t {
        const gguf::Value* v = f.find(key);
        if (!v || v->type == gguf::ValueType::Array) return 0;  // per-layer arrays: unknown
        const auto i = f.get_int(key);
        return i && *i > 0 && *i <= 0xFFFFFFFFll ? static_cast<uint32_t>(*i) : 0;
    };
    m.n_layer = u32(m.arch + ".block_count");
    m.n_head = u32(m.arch + ".attention.head_count");
    m.n_head_kv = u32(m.arch + ".attention.head_count_kv");
    if (m.n_head_kv == 0) m.n_head_kv = m.n_head;
    m.n_expert = u32(m.arch + ".expert_count");
    return m;
}

std::vector<MixChoice> choose_types(const MixModel& model, const std::vector<MixTensor>& tensors,
                                    Target target, bool pure) {
    const Type default_type = target_info(target).default_type;
    State qs;
    qs.n_layer = static_cast<int>(model.n_layer);
    for (const MixTensor& t : tensors) {
        const Category c = category_of(t.name);
        if (is_attn_v(c)) ++qs.n_attention_wv;
        if (c == Category::Output) qs.tied = false;
    }
    std::vector<MixChoice> out;
    out.reserve(tensors.size());
    for (const MixTensor& t : tensors) {
        MixChoice ch;
        if (!allows_quantization(t)) {
            ch.type = t.type;
            ch.reason = t.n_dims < 2 ? "1-D tensor, kept as stored"
                                     : "not a quantizable weight, kept as stored";
            out.push_back(ch);
            continue;
        }
        ch.quantize = true;
        Type type = default_type;
        if (is_quantized(default_type)) {
            if (!pure) type = mix_type(qs, model, t, category_of(t.name), target, type, ch.reason);
            type = fallback(t, type, ch.reason);
        }
        ch.type = static_cast<uint32_t>(type);
        out.push_back(ch);
    }
    return out;
}

}  // namespace wb::quant
