#pragma once
// How a model version is named wherever the run log is shown or exported:
// "<file name> · <quantization> · <first 8 hex digits of SHA-256>", e.g.
// "stories260K.gguf · F32 · 270cba1b", so an F32 file and its Q8_0 and
// Q4_0 copies (one general.name, e.g. "llama") tell apart at a glance.

namespace wb::runlog {

/// SQLite expression over a model_versions row aliased `m`, giving its
/// label (TEXT, never NULL). The file name is the last '/' component of
/// m.path (where the file was first seen). The quantization is the file
/// type without llama.cpp's MOSTLY_/ALL_ prefix ("Q4_K_M", "F16", "F32");
/// a file without general.file_type gets the one tensor type all its
/// tensors share, upper-cased ("F32" for stories260K), else "mixed".
inline constexpr const char* kModelLabelSql =
    "(substr(m.path, length(rtrim(m.path, replace(m.path, '/', ''))) + 1) || ' · ' || "
    "CASE WHEN COALESCE(m.file_type_name, '') <> '' "
    "THEN replace(replace(m.file_type_name, 'MOSTLY_', ''), 'ALL_', '') "
    "WHEN (SELECT COUNT(*) FROM json_each(m.tensor_types)) = 1 "
    "THEN upper((SELECT key FROM json_each(m.tensor_types))) "
    "ELSE 'mixed' END || ' · ' || substr(m.sha256, 1, 8))";

}  // namespace wb::runlog
