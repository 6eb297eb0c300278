#pragma once
// wb_tokenizer: vocabulary from GGUF with its SentencePiece or byte-level BPE
// tokenizer, detokenizers.
// Include this one header to use the library.

#include "tokenizer/stream_detokenizer.h"  // IWYU pragma: export
#include "tokenizer/token_type.h"          // IWYU pragma: export
#include "tokenizer/vocab.h"               // IWYU pragma: export
