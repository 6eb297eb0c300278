#pragma once
// Turns an exception from loading or running a model into an error a user
// can act on: what went wrong, where (file, byte offset, field, tensor),
// and what to do next. The error dialog shows these fields; the kind
// decides which action buttons it offers (e.g. "Use CPU reference").

#include <QString>
#include <exception>

namespace wb::gui {

/// A classified, user-facing error.
struct UserError {
    enum class Kind {
        NoVulkanDevice,        ///< no loader / no device / instance creation failed
        ModelTooLarge,         ///< weights + KV cache exceed device memory
        UnsupportedType,       ///< a tensor type the engine cannot compute with
        UnsupportedArch,       ///< general.architecture the engine does not implement
        UnsupportedTokenizer,  ///< tokenizer.ggml.model not implemented (e.g. gpt2 BPE)
        CorruptFile,           ///< the GGUF parser rejected the file
        FileNotFound,          ///< missing or unreadable file
        Other,
    };
    Kind kind = Kind::Other;
    QString title;   ///< one line, e.g. "This model file is damaged"
    QString what;    ///< the engine's message, verbatim
    QString where;   ///< "file …, offset 1234, field tensor_count" or empty
    QString action;  ///< what the user can do
};

/// Classifies the exception `e` thrown while loading or running `path` by
/// its type (wb::Error's kind, and for unsupported features which one;
/// engine/errors/errors.h), never by its message text: any other exception
/// is Kind::Other. Never throws.
UserError classify_error(const std::exception& e, const QString& path);

}  // namespace wb::gui
