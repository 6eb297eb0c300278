#include "user_error.h"

#include <QFileInfo>

#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::gui {

UserError classify_error(const std::exception& e, const QString& path) {
    UserError u;
    u.what = QString::fromUtf8(e.what());
    const QString low = u.what.toLower();
    const QString file = path.isEmpty() ? QString() : QFileInfo(path).fileName();

    // An option of a supported architecture (mixture of experts, YaRN, ...)
    // or a tensor the architecture does not have: the file is fine, the
    // engine does not run it.
    if (low.contains("(supported architectures:") || low.contains("not part of architecture")) {
        u.kind = UserError::Kind::UnsupportedArch;
        u.title = QStringLiteral("This model uses a feature this version does not run");
        const qsizetype k = u.what.indexOf(QStringLiteral("metadata key '"));
        const qsizetype t = u.what.indexOf(QStringLiteral("tensor '"));
        const qsizetype at = k >= 0 ? k : t;
        const QString field =
            at >= 0 ? u.what.mid(at, u.what.indexOf('\'', u.what.indexOf('\'', at) + 1) - at + 1)
                    : QString();
        u.where = field.isEmpty() ? QStringLiteral("file %1").arg(path)
                                  : QStringLiteral("file %1, %2").arg(path, field);
        u.action = QStringLiteral(
            "This version runs dense gemma2, gemma3, llama (Llama, Mistral), phi3, qwen2 and qwen3 "
            "models; the message names what this one uses. Open another model.");
        return u;
    }
    if (const auto* g = dynamic_cast<const gguf::Error*>(&e)) {
        // A missing file also surfaces as a gguf::Error from the mmap layer.
        if (low.contains("no such file") || low.contains("cannot open") ||
            low.contains("permission denied")) {
            u.kind = UserError::Kind::FileNotFound;
            u.title = QStringLiteral("The model file cannot be opened");
            u.where = path;
            u.action =
                QStringLiteral("Check that the file exists and is readable, then open it again.");
            return u;
        }
        u.kind = UserError::Kind::CorruptFile;
        u.title = QStringLiteral("This model file is damaged or not a GGUF file");
        QStringList parts{QStringLiteral("file %1").arg(path)};
        if (g->offset()) parts << QStringLiteral("byte offset %1").arg(*g->offset());
        if (!g->field().empty())
            parts << QStringLiteral("field %1").arg(QString::fromStdString(g->field()));
        u.where = parts.join(", ");
        u.action = QStringLiteral(
            "Download the file again (compare its SHA-256 with the publisher's) or open another "
            "model.");
        return u;
    }
    if (dynamic_cast<const ggml::UnsupportedType*>(&e) != nullptr ||
        low.contains("unsupported tensor type")) {
        u.kind = UserError::Kind::UnsupportedType;
        u.title = QStringLiteral("The model uses a tensor type this version cannot run");
        u.where = QStringLiteral("file %1").arg(path);
        u.action = QStringLiteral(
                       "Use a file quantized as one of %1 (for example with workbench-cli "
                       "quantize), or open another model.")
                       .arg(QString::fromStdString(ggml::supported_type_names(ggml::Backend::Cpu)));
        return u;
    }
    if (low.contains("unsupported architecture")) {
        u.kind = UserError::Kind::UnsupportedArch;
        u.title = QStringLiteral("This model's architecture is not supported yet");
        u.where = QStringLiteral("file %1, field general.architecture").arg(path);
        u.action = QStringLiteral(
            "This version runs gemma2, gemma3, llama (Llama, Mistral), phi3, qwen2 and qwen3 "
            "models. Open another model.");
        return u;
    }
    if (low.contains("unsupported tokenizer")) {
        u.kind = UserError::Kind::UnsupportedTokenizer;
        u.title = QStringLiteral("This model's tokenizer is not supported yet");
        u.where = QStringLiteral("file %1, field tokenizer.ggml.model").arg(path);
        u.action = QStringLiteral(
            "This version reads SentencePiece (llama) vocabularies. Open another model.");
        return u;
    }
    if (low.contains("does not fit") || low.contains("too large") ||
        low.contains("out of device memory") || low.contains("error_out_of_device_memory") ||
        low.contains("not enough device memory") ||
        (low.contains("needs") && low.contains("bytes available"))) {
        u.kind = UserError::Kind::ModelTooLarge;
        u.title = QStringLiteral("The model does not fit in the device's memory");
        u.where = QStringLiteral("file %1").arg(path);
        u.action = QStringLiteral(
            "Lower the context size in Settings, pick a device with more memory, use a smaller "
            "quantization, or run on the CPU reference.");
        return u;
    }
    if (low.contains("vulkan") || low.contains("vk_error") || low.contains("no device")) {
        u.kind = UserError::Kind::NoVulkanDevice;
        u.title = QStringLiteral("No usable Vulkan device");
        u.where = file.isEmpty() ? QString() : QStringLiteral("while loading %1").arg(file);
        u.action = QStringLiteral(
            "Run on the CPU reference instead (slower, same results), or install a Vulkan driver "
            "(for a CPU-only machine: apt-get install mesa-vulkan-drivers).");
        return u;
    }
    if (low.contains("no such file")) {
        u.kind = UserError::Kind::FileNotFound;
        u.title = QStringLiteral("The model file cannot be opened");
        u.where = path;
        u.action =
            QStringLiteral("Check that the file exists and is readable, then open it again.");
        return u;
    }
    u.title = QStringLiteral("Something went wrong");
    u.where = path.isEmpty() ? QString() : QStringLiteral("file %1").arg(path);
    u.action = QStringLiteral("The workbench is still usable; try again or open another model.");
    return u;
}

}  // namespace wb::gui
