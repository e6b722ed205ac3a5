//===- RecordFormat.h - Checking and encoding record fields -----*- C++ -*-===//
//
// Internal to lib/Database: what a well-formed record is, shared by the
// writer (addRecords refuses malformed records), the reader (rows that fail
// count as unreadable) and JSONL import, so the three agree.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_DATABASE_RECORDFORMAT_H
#define KE_LIB_DATABASE_RECORDFORMAT_H

#include "ke/Database/Database.h"

#include <optional>
#include <string>
#include <vector>

namespace ke::detail {

/// Fails, saying why, when `record` is not one the database may hold:
/// empty key or target, unknown role, empty error class, knobs that are not
/// a JSON object, a non-finite repeat time, or a valid record without a
/// finite positive median.
llvm::Error validateRecord(const TuningRecord &record);

/// Repeat times as the text the `seconds` column holds: a compact JSON
/// array, every double printed so it reads back exactly.
std::string encodeSeconds(llvm::ArrayRef<double> seconds);
/// The inverse of encodeSeconds; std::nullopt unless `text` is a JSON array
/// of numbers.
std::optional<std::vector<double>> decodeSeconds(llvm::StringRef text);

} // namespace ke::detail

#endif // KE_LIB_DATABASE_RECORDFORMAT_H
