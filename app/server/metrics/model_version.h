#pragma once
// The model_version label of the server's metrics: what tells two versions
// of a model apart (a requantized file, a new fine-tune). Qt-free.

#include <string>

#include "runlog/model_facts.h"

namespace wb::server {

/// "<quantization>-<first 8 hex digits of the file's SHA-256>", e.g.
/// "F32-270cba1b", "Q4_K_M-1f0c2a9e": the quantization and hash prefix the
/// run log's model label shows (runlog/model_label.h, same rules): the file
/// type without llama.cpp's MOSTLY_/ALL_ prefix, else the one tensor type
/// all tensors share (upper-cased), else "mixed". Throws
/// std::invalid_argument when `sha256_hex` has fewer than 8 characters.
std::string model_version_label(const runlog::ModelFacts& facts, const std::string& sha256_hex);

/// model_version_label() of the GGUF file at `path`: reads its header and
/// hashes the whole file (seconds for a multi-GB file: call it once per
/// load). Throws what runlog::read_model_facts and runlog::sha256_file_hex
/// throw (gguf::Error, std::runtime_error naming the path).
std::string model_version_label_of_file(const std::string& path);

}  // namespace wb::server
