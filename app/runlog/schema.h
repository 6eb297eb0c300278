#pragma once
// Run-log schema and its migrations. The schema version lives in
// `PRAGMA user_version` (https://sqlite.org/pragma.html#pragma_user_version);
// `PRAGMA application_id` marks the file as an Inference Workbench run log
// so a foreign SQLite file is never migrated by mistake.
//
// Migration k takes a database from version k to k+1 inside one
// transaction that also sets user_version = k+1, so a failed step leaves
// the file at version k. To change the schema, append a step to
// kMigrations (never edit a released one) and bump nothing else:
// kSchemaVersion is the list's length.

#include <span>

#include "runlog/sqlite_db.h"

namespace wb::runlog {

/// 'IWBL' — written to PRAGMA application_id of every run-log file.
inline constexpr int32_t kApplicationId = 0x4957424C;

/// One migration step: SQL that turns version `from` into `from + 1`.
struct Migration {
    int from;
    const char* sql;
};

/// Every step from version 0 (empty file) to the current schema, in order.
std::span<const Migration> migrations();

/// The schema version this build writes (= migrations().size()).
int schema_version();

/// Applies the steps of `steps` that start at or above the file's current
/// user_version, each in its own transaction, until the file is at
/// steps.size(). `steps[k].from` must equal k. Throws DbError naming the
/// step ("migrate schema 0 -> 1: ...") when one fails; that step is rolled
/// back. Foreign keys are off while the steps run (a step may rebuild a
/// table that others refer to) and restored afterwards; each step checks
/// them (PRAGMA foreign_key_check) before it commits and throws DbError
/// naming the table and row of a broken reference (the step rolled back).
/// The caller checks beforehand that the file is not newer.
void migrate(const Db& db, std::span<const Migration> steps);

}  // namespace wb::runlog
