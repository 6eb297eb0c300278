#pragma once
// Where the application's bundled files are, found relative to the running
// executable so that neither the build tree nor the install prefix is baked
// into the binary. Qt-free (used by workbench-cli and the GUI alike).

#include <filesystem>
#include <string>
#include <vector>

namespace wb::paths {

/// Absolute path of the running executable (/proc/self/exe). Throws
/// std::runtime_error when it cannot be read.
std::filesystem::path executable_path();

/// Parent levels searched for a build tree's resources/ folder.
inline constexpr int kMaxBuildDepth = 6;

/// File name of the model bundled with the application.
inline constexpr const char* kDefaultModelName = "stories260K.gguf";

/// Folders searched for bundled models, in order, for an executable at
/// `exe`: for the exe's folder and each parent up to kMaxBuildDepth levels
/// up, <that folder>/share/inference-workbench/models and then
/// <that folder>/resources/models. This finds
///   - the installed model: /usr/bin/.. -> /usr/share/inference-workbench/models;
///   - the copy the build puts in <build>/share/inference-workbench/models
///     (app/cli/CMakeLists.txt), for a build folder anywhere;
///   - the source checkout's resources/models above build/<preset>/app/cli.
std::vector<std::filesystem::path> model_search_dirs(const std::filesystem::path& exe);

/// Sample inputs bundled with the application (resources/samples): a
/// plain-text story for perplexity and a JSONL test set, both for Compare's
/// "Run test set" (see resources/samples/README.md for their provenance).
inline constexpr const char* kSamplePerplexityText = "stories-sample.txt";
inline constexpr const char* kSampleTestSet = "stories-testset.jsonl";

/// Folders searched for the bundled samples: as model_search_dirs() with
/// "samples" in place of "models".
std::vector<std::filesystem::path> sample_search_dirs(const std::filesystem::path& exe);

/// The bundled sample `name` (kSamplePerplexityText, kSampleTestSet) in the
/// first of sample_search_dirs() of the running executable that has it, or
/// an empty path when none has it (or the executable cannot be found).
/// Never throws.
std::filesystem::path find_sample(const std::string& name);

/// The default model (kDefaultModelName) in the first of model_search_dirs()
/// of the running executable that has it. Throws std::runtime_error
/// "default model stories260K.gguf not found; looked in: A, B, C" otherwise.
std::filesystem::path default_model_path();

}  // namespace wb::paths
