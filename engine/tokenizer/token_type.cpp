#include "tokenizer/token_type.h"

namespace wb::tokenizer {

const char* token_type_name(TokenType t) {
    switch (t) {
        case TokenType::Undefined:
            return "undefined";
        case TokenType::Normal:
            return "normal";
        case TokenType::Unknown:
            return "unknown";
        case TokenType::Control:
            return "control";
        case TokenType::UserDefined:
            return "user-defined";
        case TokenType::Unused:
            return "unused";
        case TokenType::Byte:
            return "byte";
    }
    return "undefined";
}

uint32_t attr_of(TokenType t) {
    switch (t) {
        case TokenType::Undefined:
            return kAttrUndefined;
        case TokenType::Normal:
            return kAttrNormal;
        case TokenType::Unknown:
            return kAttrUnknown;
        case TokenType::Control:
            return kAttrControl;
        case TokenType::UserDefined:
            return kAttrUserDefined;
        case TokenType::Unused:
            return kAttrUnused;
        case TokenType::Byte:
            return kAttrByte;
    }
    return kAttrUndefined;
}

}  // namespace wb::tokenizer
