#pragma once
// What the model bar and the status bar show about a GGUF file, read from
// its header alone (no weights are touched): name, architecture,
// quantization, size, and whether it carries a chat template.

#include <QString>

namespace wb::gui {

/// Facts about one GGUF model file.
struct ModelInfo {
    QString path;
    QString name;          ///< general.name, else the file name
    QString arch;          ///< general.architecture
    QString quantization;  ///< dominant tensor type by bytes, e.g. "f32", "q8_0"
    qint64 file_bytes = 0;
    qint64 n_params = 0;  ///< sum of tensor elements
    int n_ctx_train = 0;  ///< <arch>.context_length, 0 if absent
    int n_layer = 0;
    bool has_chat_template = false;  ///< tokenizer.chat_template present
    QString tokenizer;               ///< tokenizer.ggml.model

    /// Reads the header of `path` with wb::gguf::File. Throws
    /// wb::gguf::Error (what: "<path>: offset N: field: problem") for a
    /// malformed file and std::runtime_error when it cannot be opened.
    static ModelInfo probe(const QString& path);

    /// "stories260K · llama · f32 · 293K params".
    QString summary() const;
};

}  // namespace wb::gui
