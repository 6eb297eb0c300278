#include "desktop/model_info.h"

#include <QFileInfo>

#include "gguf/gguf.h"
#include "quant/file_info.h"

namespace wb::gui {

ModelInfo ModelInfo::probe(const QString& path) {
    const gguf::File f = gguf::File::open(path.toStdString());
    ModelInfo m;
    m.path = path;
    m.file_bytes = static_cast<qint64>(f.file_size());
    m.arch = QString::fromStdString(f.get_string("general.architecture").value_or(""));
    m.name = QString::fromStdString(f.get_string("general.name").value_or(""));
    if (m.name.isEmpty()) m.name = QFileInfo(path).completeBaseName();
    m.tokenizer = QString::fromStdString(f.get_string("tokenizer.ggml.model").value_or(""));
    m.has_chat_template = f.find("tokenizer.chat_template") != nullptr;
    const std::string a = m.arch.toStdString();
    m.n_ctx_train = static_cast<int>(f.get_int(a + ".context_length").value_or(0));
    m.n_layer = static_cast<int>(f.get_int(a + ".block_count").value_or(0));

    for (const gguf::TensorInfo& t : f.tensors()) m.n_params += static_cast<qint64>(t.n_elements());
    // The file type as llama.cpp names it and the bits per weight
    // ("Q4_K_M, 4.85 bpw"), with the tensors of each type.
    const quant::QuantizationInfo q = quant::describe_quantization(f);
    m.quantization = QString::fromStdString(q.summary());
    m.tensor_types = QString::fromStdString(q.tensor_types_text());
    return m;
}

QString ModelInfo::summary() const {
    QString params;
    if (n_params >= 1000000000)
        params = QString::number(static_cast<double>(n_params) / 1e9, 'f', 1) + "B";
    else if (n_params >= 1000000)
        params = QString::number(static_cast<double>(n_params) / 1e6, 'f', 1) + "M";
    else
        params = QString::number(static_cast<double>(n_params) / 1e3, 'f', 0) + "K";
    const QFileInfo file(path);
    const bool repeats = name.isEmpty() || name.compare(arch, Qt::CaseInsensitive) == 0 ||
                         name == file.fileName() || name == file.completeBaseName();
    const QString tail = QStringLiteral("%1 · %2 · %3 params").arg(arch, quantization, params);
    return repeats ? tail : name + QStringLiteral(" · ") + tail;
}

QString ModelInfo::fileName() const {
    return QFileInfo(path).fileName();
}

}  // namespace wb::gui
