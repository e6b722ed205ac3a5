//===- Database.h - The tuning database (SQLite) ----------------*- C++ -*-===//
//
// Records of measured candidates, kept in SQLite (WAL journal, one
// transaction per batch) so a kill in the middle of tuning loses at most the
// batch in flight. Tables (schema in docs/database.md): workloads (key,
// op, canonical IR), targets (string, device, driver), records (workload,
// target, ke/LLVM versions, pipeline hash, sketch, knobs, script, all repeat
// times, median, error class and message, role, timestamp). JSONL export and
// import move records between databases. Unreadable records and records of
// another pipeline hash count as misses for getBest().
//
//===----------------------------------------------------------------------===//
#ifndef KE_DATABASE_DATABASE_H
#define KE_DATABASE_DATABASE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ke {

/// One measured candidate (or the reference / untuned default).
struct TuningRecord {
  std::string workloadKey;
  /// Target string as the user gave it canonicalized ("cpu", "cuda:sm_90").
  std::string target;
  /// Device name (CPU model or GPU name) and driver/runtime version.
  std::string device, driver;
  std::string keVersion, llvmVersion;
  /// Hash of the lowering pipeline: records of another pipeline are stale.
  std::string pipelineHash;
  /// "reference", "untuned", "trial".
  std::string role = "trial";
  /// Sketch rule name and knob values (a JSON object text, name -> value);
  /// empty for the reference.
  std::string sketch, knobs;
  /// The full transform script.
  std::string script;
  /// Every timed repeat, in seconds, and their median (valid records).
  std::vector<double> seconds;
  double medianSeconds = 0;
  /// "none" or a failure class (invalid-schedule, compile-error, ...).
  std::string error = "none";
  std::string message;
  /// Seconds since the Unix epoch when the record was made.
  int64_t timestamp = 0;

  bool isValid() const { return error == "none"; }
  /// One JSONL line's object; fromJSON accepts exactly what toJSON writes.
  llvm::json::Value toJSON() const;
  static llvm::Expected<TuningRecord> fromJSON(const llvm::json::Value &value);
};

/// A workload's identity in the database.
struct WorkloadEntry {
  std::string key, opName, canonicalIR;
};

class TuningDatabase {
public:
  /// Opens (creating when missing) the database at `path`, in WAL mode.
  /// Fails with a message naming the path when it cannot be opened or is not
  /// a ke database.
  static llvm::Expected<std::unique_ptr<TuningDatabase>>
  open(llvm::StringRef path);
  ~TuningDatabase();

  /// Inserts the workload unless its key is present.
  llvm::Error addWorkload(const WorkloadEntry &workload);
  /// Appends `records` in one transaction (all or nothing).
  llvm::Error addRecords(llvm::ArrayRef<TuningRecord> records);

  /// Every record of `workloadKey` on `target`, oldest first. Rows that
  /// cannot be read back are skipped.
  llvm::Expected<std::vector<TuningRecord>>
  getRecords(llvm::StringRef workloadKey, llvm::StringRef target);
  /// The valid trial/untuned record with the lowest median for
  /// `workloadKey` on `target` with pipeline hash `pipelineHash`.
  llvm::Expected<std::optional<TuningRecord>>
  getBest(llvm::StringRef workloadKey, llvm::StringRef target,
          llvm::StringRef pipelineHash);

  /// One summary per (workload, target): counts and best median.
  struct Summary {
    std::string workloadKey, opName, target;
    uint64_t records = 0, valid = 0;
    std::optional<double> bestSeconds;
  };
  llvm::Expected<std::vector<Summary>> list();

  /// Writes every record as one JSON object per line (workload op name and
  /// canonical IR included so an import can recreate the workload rows).
  llvm::Error exportJSONL(llvm::raw_ostream &os);
  /// Reads JSONL written by exportJSONL; returns how many records were
  /// added. A malformed line fails the import with its line number and
  /// nothing is added.
  llvm::Expected<uint64_t> importJSONL(llvm::StringRef text);

private:
  TuningDatabase() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace ke

#endif // KE_DATABASE_DATABASE_H
