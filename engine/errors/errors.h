#pragma once
// The engine's error kinds, so that callers (the GUI's error dialog, the
// CLI's exit messages, a future server's HTTP status) choose what to say by
// the type of a failure, never by matching its message text.
//
//   FileError         the file cannot be opened or read (missing, no
//                     permission, a folder, an I/O error)
//   FormatError       the file is read but malformed (gguf::Error derives
//                     from it: path, byte offset, field)
//   UnsupportedError  a well-formed input this build cannot run: an
//                     architecture, a tokenizer model, a tensor type
//                     (ggml::UnsupportedType derives from it); feature()
//                     says which ("architecture", "tokenizer", "tensor type")
//   DeviceError       no Vulkan loader / driver / device, or a device
//                     failure (vk::Error derives from it)
//   OutOfMemoryError  the model or a buffer does not fit the device's memory
//
// Every class keeps std::runtime_error's what() (the message names what and
// where); kind() lets a catch of wb::Error switch on the kind without a
// cast per class.

#include <stdexcept>
#include <string>
#include <utility>

namespace wb {

enum class ErrorKind { File, Format, Unsupported, Device, OutOfMemory };

/// "file", "format", "unsupported", "device", "out of memory".
inline const char* to_string(ErrorKind k) {
    switch (k) {
        case ErrorKind::File:
            return "file";
        case ErrorKind::Format:
            return "format";
        case ErrorKind::Unsupported:
            return "unsupported";
        case ErrorKind::Device:
            return "device";
        case ErrorKind::OutOfMemory:
            return "out of memory";
    }
    return "?";
}

/// A std::runtime_error that carries a kind from the enum `Kind`, so a
/// catch switches on kind() instead of matching what(). The engine's errors
/// use ErrorKind; a job with failures of its own (quantize::Error) names its
/// own enum. what() is the message as given (it names what and where).
template <typename Kind>
class KindError : public std::runtime_error {
  public:
    KindError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

/// Base of the engine's typed errors. Catch it to learn the kind of any of them.
using Error = KindError<ErrorKind>;

/// A file that cannot be opened or read. what(): "<path>: cannot open: <reason>".
class FileError : public Error {
  public:
    FileError(std::string path, const std::string& what)
        : Error(ErrorKind::File, what), path_(std::move(path)) {}
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

/// A malformed input file (see gguf::Error for GGUF files).
class FormatError : public Error {
  public:
    explicit FormatError(const std::string& what) : Error(ErrorKind::Format, what) {}
};

/// A feature of a valid input this build does not implement. `feature`
/// names which: "architecture" (general.architecture has no spec),
/// "architecture option" (a supported architecture with an option or a
/// tensor the engine does not run: mixture of experts, YaRN, a bias),
/// "tokenizer", "tensor type". `field` names where, when one place does:
/// "general.architecture", "metadata key 'llama.expert_count'", "tensor
/// 'blk.0.attn_q.bias'"; empty otherwise.
class UnsupportedError : public Error {
  public:
    UnsupportedError(std::string feature, const std::string& what, std::string field = {})
        : Error(ErrorKind::Unsupported, what),
          feature_(std::move(feature)),
          field_(std::move(field)) {}
    const std::string& feature() const { return feature_; }
    const std::string& field() const { return field_; }

  private:
    std::string feature_;
    std::string field_;
};

/// No usable compute device, or the device failed. A device error that is
/// a lack of memory is an OutOfMemoryError instead (kind OutOfMemory).
class DeviceError : public Error {
  public:
    explicit DeviceError(const std::string& what, ErrorKind kind = ErrorKind::Device)
        : Error(kind, what) {}
};

/// Something does not fit the device's (or the host's) memory: what()
/// says how many bytes were needed and how many are available when known.
class OutOfMemoryError : public Error {
  public:
    explicit OutOfMemoryError(const std::string& what) : Error(ErrorKind::OutOfMemory, what) {}
};

}  // namespace wb
