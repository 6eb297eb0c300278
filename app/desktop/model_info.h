#pragma once
// What the model bar and the status bar show about a GGUF file, read from
// its header alone (no weights are touched): name, architecture,
// quantization, size, and whether it carries a chat template.

#include <QString>
#include <QStringList>

namespace wb::gui {

/// Facts about one GGUF model file.
struct ModelInfo {
    QString path;
    QString name;  ///< general.name, else the file name
    QString arch;  ///< general.architecture
    QString
        quantization;  ///< file type and bits per weight, "Q4_K_M, 4.85 bpw" (quant/file_info.h)
    QString tensor_types;  ///< tensors per type, "Q4_K x13, Q6_K x3, F32 x5"
    qint64 file_bytes = 0;
    qint64 n_params = 0;  ///< sum of tensor elements
    int n_ctx_train = 0;  ///< <arch>.context_length, 0 if absent
    int n_layer = 0;
    bool has_chat_template = false;  ///< tokenizer.chat_template present
    /// Why the model's own chat template is not used (chat::choose_template's
    /// note): naming the file and the error (a limit it hit, a syntax
    /// error), or saying the model has none (plain text completion); "" when
    /// it is used. Filled by the loader (EngineSession::chat_template), not
    /// by probe().
    QString template_note;
    QString tokenizer;  ///< tokenizer.ggml.model
    /// What the loaded session read but did not use, one sentence each
    /// naming the file and the GGUF key (tokenizer::Vocab::load_warnings());
    /// filled when a model is loaded, empty from probe().
    QStringList load_warnings;

    /// Reads the header of `path` with wb::gguf::File. Throws
    /// wb::gguf::Error (what: "<path>: offset N: field: problem") for a
    /// malformed file and std::runtime_error when it cannot be opened.
    static ModelInfo probe(const QString& path);

    /// "tinyllama · llama · Q4_K_M, 4.85 bpw · 1.1B params"; the name is left
    /// out when it only repeats the architecture or the file name
    /// ("llama · F32, 32.00 bpw · 293K params" for stories260K.gguf, whose
    /// general.name is "llama").
    QString summary() const;
    /// The file name ("stories260K.gguf"): what tells a model and its
    /// quantized copies apart, which share general.name.
    QString fileName() const;
};

}  // namespace wb::gui
