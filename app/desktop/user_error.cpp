#include "desktop/user_error.h"

#include <QFileInfo>
#include <QStringList>

#include "errors/errors.h"
#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::gui {

namespace {

/// The Unsupported kinds, told apart by the feature the engine names.
void classify_unsupported(const wb::UnsupportedError& e, const QString& path, UserError& u) {
    const QString field = QString::fromStdString(e.field());
    const QString where = field.isEmpty() ? QStringLiteral("file %1").arg(path)
                                          : QStringLiteral("file %1, %2").arg(path, field);
    if (e.feature() == "architecture option") {
        // An option of a supported architecture (mixture of experts, YaRN,
        // ...) or a tensor it does not have: the file is fine, the engine
        // does not run it.
        u.kind = UserError::Kind::UnsupportedArch;
        u.title = QStringLiteral("This model uses a feature this version does not run");
        u.where = where;
        u.action = QStringLiteral(
            "This version runs dense gemma2, gemma3, llama (Llama, Mistral), phi3, qwen2 and qwen3 "
            "models; the message names what this one uses. Open another model.");
    } else if (e.feature() == "architecture") {
        u.kind = UserError::Kind::UnsupportedArch;
        u.title = QStringLiteral("This model's architecture is not supported yet");
        u.where = QStringLiteral("file %1, field general.architecture").arg(path);
        u.action = QStringLiteral(
            "This version runs gemma2, gemma3, llama (Llama, Mistral), phi3, qwen2 and qwen3 "
            "models. Open another model.");
    } else if (e.feature() == "tokenizer") {
        u.kind = UserError::Kind::UnsupportedTokenizer;
        u.title = QStringLiteral("This model's tokenizer is not supported yet");
        u.where = field.isEmpty() ? QStringLiteral("file %1, field tokenizer.ggml.model").arg(path)
                                  : QStringLiteral("file %1, field %2").arg(path, field);
        u.action = QStringLiteral(
            "This version reads SentencePiece (llama) and byte-level BPE (gpt2) vocabularies "
            "with the pre-tokenizers it names. Open another model.");
    } else {
        u.kind = UserError::Kind::UnsupportedType;
        u.title = QStringLiteral("The model uses a tensor type this version cannot run");
        u.where = where;
        u.action = QStringLiteral(
                       "Use a file quantized as one of %1 (for example with workbench-cli "
                       "quantize), or open another model.")
                       .arg(QString::fromStdString(ggml::supported_type_names(ggml::Backend::Cpu)));
    }
}

}  // namespace

UserError classify_error(const std::exception& e, const QString& path) {
    UserError u;
    u.what = QString::fromUtf8(e.what());
    const QString file = path.isEmpty() ? QString() : QFileInfo(path).fileName();
    // The engine throws typed errors (engine/errors/errors.h); the kind and,
    // for unsupported features, the feature decide what the user is told.
    const auto* typed = dynamic_cast<const wb::Error*>(&e);
    if (typed == nullptr) {
        u.title = QStringLiteral("Something went wrong");
        u.where = path.isEmpty() ? QString() : QStringLiteral("file %1").arg(path);
        u.action =
            QStringLiteral("The workbench is still usable; try again or open another model.");
        return u;
    }
    switch (typed->kind()) {
        case wb::ErrorKind::File:
            u.kind = UserError::Kind::FileNotFound;
            u.title = QStringLiteral("The model file cannot be opened");
            u.where = path;
            u.action =
                QStringLiteral("Check that the file exists and is readable, then open it again.");
            return u;
        case wb::ErrorKind::Format: {
            u.kind = UserError::Kind::CorruptFile;
            u.title = QStringLiteral("This model file is damaged or not a GGUF file");
            QStringList parts{QStringLiteral("file %1").arg(path)};
            if (const auto* g = dynamic_cast<const gguf::Error*>(&e)) {
                if (g->offset()) parts << QStringLiteral("byte offset %1").arg(*g->offset());
                if (!g->field().empty())
                    parts << QStringLiteral("field %1").arg(QString::fromStdString(g->field()));
            }
            u.where = parts.join(", ");
            u.action = QStringLiteral(
                "Download the file again (compare its SHA-256 with the publisher's) or open "
                "another model.");
            return u;
        }
        case wb::ErrorKind::Unsupported:
            classify_unsupported(static_cast<const wb::UnsupportedError&>(*typed), path, u);
            return u;
        case wb::ErrorKind::OutOfMemory:
            u.kind = UserError::Kind::ModelTooLarge;
            u.title = QStringLiteral("The model does not fit in the device's memory");
            u.where = QStringLiteral("file %1").arg(path);
            u.action = QStringLiteral(
                "Lower the context size in Settings, pick a device with more memory, use a "
                "smaller quantization, or run on the CPU.");
            return u;
        case wb::ErrorKind::Device:
            u.kind = UserError::Kind::NoVulkanDevice;
            u.title = QStringLiteral("No usable Vulkan device");
            u.where = file.isEmpty() ? QString() : QStringLiteral("while loading %1").arg(file);
            u.action = QStringLiteral(
                "Run on the CPU instead (slower, same results), or install a Vulkan "
                "driver (for a CPU-only machine: apt-get install mesa-vulkan-drivers).");
            return u;
    }
    return u;
}

}  // namespace wb::gui
