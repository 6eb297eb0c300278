#pragma once
// Token types as stored in `tokenizer.ggml.token_type` (GGUF spec,
// llama.cpp `llama_token_type`), and the attribute bits derived from them.

#include <cstdint>

namespace wb::tokenizer {

/// Value of one `tokenizer.ggml.token_type` entry. Ids are those of the GGUF
/// spec; a value outside 0..6 in a file is read as Undefined, as llama.cpp
/// does.
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

/// Short name of a token type ("normal", "control", ...), for messages.
const char* token_type_name(TokenType t);

/// Behaviour bits of a token (llama.cpp `llama_token_attr`). They start from
/// the token type and are then adjusted by the rules llama.cpp applies at
/// load time (end-of-generation tokens become Control; Phi-3 special tokens
/// get RStrip).
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrLStrip = 1u << 7,  ///< drop whitespace before this token's text when parsing special text
    kAttrRStrip = 1u << 8,  ///< drop whitespace after it
};

/// The attribute bit of a token type (llama.cpp `token_type_to_attr`).
uint32_t attr_of(TokenType t);

}  // namespace wb::tokenizer
