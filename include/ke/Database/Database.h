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
  /// "reference", "untuned", "trial"; after a search, "recheck" for each
  /// re-timing of its finalists and "final" for the winner's
  /// (ke/Search/FinalCheck.h).
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
  /// The cost model's features of the candidate (ke/Search/Features.h) and
  /// the version of their definition (getFeaturesVersion); empty when not
  /// stored. Kept for transfer learning (getTransferSamples), not part of
  /// the JSONL export.
  std::vector<float> features;
  std::string featuresVersion;

  bool isValid() const { return error == "none"; }
  /// One JSONL line's object; fromJSON accepts exactly what toJSON writes.
  llvm::json::Value toJSON() const;
  static llvm::Expected<TuningRecord> fromJSON(const llvm::json::Value &value);
};

/// A workload's identity in the database.
struct WorkloadEntry {
  std::string key, opName, canonicalIR;
};

/// A connection to one database file. One thread at a time uses an
/// instance; several processes on one host may share a file (WAL readers do
/// not block the writer, writers wait for each other up to a timeout).
class TuningDatabase {
public:
  /// Opens (creating when missing) the database at `path`, in WAL mode.
  /// Fails with a message naming the path when it cannot be opened or is not
  /// a ke database.
  static llvm::Expected<std::unique_ptr<TuningDatabase>>
  open(llvm::StringRef path);
  /// Opens an existing ke database at `path` and never creates one: for
  /// readers, so a mistyped path is an error instead of a new empty file.
  static llvm::Expected<std::unique_ptr<TuningDatabase>>
  openExisting(llvm::StringRef path);
  /// The schema version this ke reads and writes (`PRAGMA user_version`).
  static constexpr int kSchemaVersion = 1;
  /// Closes the connection, except in a forked child of the process that
  /// opened it (SQLite connections must not cross fork(): closing there
  /// could checkpoint or unlink the parent's WAL).
  ~TuningDatabase();

  /// Inserts the workload unless its key is present (a row that records of
  /// an unknown key created, with empty op and IR, is filled in).
  llvm::Error addWorkload(const WorkloadEntry &workload);
  /// Appends `records` in one transaction (all or nothing). A malformed
  /// record (empty key or target, unknown role, knobs that are not a JSON
  /// object, a valid record without a finite positive median) fails the
  /// batch, naming its index.
  llvm::Error addRecords(llvm::ArrayRef<TuningRecord> records);

  /// Every record of `workloadKey` on `target`, oldest first (insertion
  /// order). Rows that cannot be read back are skipped.
  llvm::Expected<std::vector<TuningRecord>>
  getRecords(llvm::StringRef workloadKey, llvm::StringRef target);
  /// The schedule to compile for `workloadKey` on `target` with pipeline
  /// hash `pipelineHash` (empty: any hash): the valid record with the lowest
  /// median among the newest "final" record (a tuning run's finalists
  /// re-timed side by side, ke/Search/FinalCheck.h) and the trial and
  /// untuned records newer than it (all of them when there is no final
  /// record); the oldest among equal medians; std::nullopt when none.
  llvm::Expected<std::optional<TuningRecord>>
  getBest(llvm::StringRef workloadKey, llvm::StringRef target,
          llvm::StringRef pipelineHash);
  /// Why getBest(workloadKey, target, pipelineHash) finds nothing, in words
  /// for a remark: no valid record at all, or valid records made under
  /// another pipeline hash, which are stale (the lowering changed since they
  /// were measured) and count as misses.
  llvm::Expected<std::string> explainNoBest(llvm::StringRef workloadKey,
                                            llvm::StringRef target,
                                            llvm::StringRef pipelineHash);

  /// A trial as the cost model's warm start takes it (docs/cost-model.md,
  /// Transfer): its workload, features and median (none: it failed).
  struct TransferSample {
    std::string workloadKey;
    std::vector<float> features;
    std::optional<double> seconds;
  };
  /// The newest `limit` trial records on `target` of workloads other than
  /// `excludedWorkload` whose features were stored under `featuresVersion`,
  /// newest first.
  llvm::Expected<std::vector<TransferSample>>
  getTransferSamples(llvm::StringRef target, llvm::StringRef featuresVersion,
                     llvm::StringRef excludedWorkload, unsigned limit);

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
  /// As above; `*skipped` counts the rows that could not be read back and
  /// were left out.
  llvm::Error exportJSONL(llvm::raw_ostream &os, uint64_t *skipped);
  /// Reads JSONL written by exportJSONL; returns how many records were
  /// added. A malformed line fails the import with its line number and
  /// nothing is added.
  llvm::Expected<uint64_t> importJSONL(llvm::StringRef text);
  /// As above, counting in `*duplicates` the records not added because one
  /// identical in every field is already present (both forms skip them, so
  /// importing an export twice, or merging both ways, does not double
  /// records).
  llvm::Expected<uint64_t> importJSONL(llvm::StringRef text,
                                       uint64_t *duplicates);

private:
  TuningDatabase() = default;
  /// open() and openExisting(): `create` makes a missing or empty file a
  /// new database.
  static llvm::Expected<std::unique_ptr<TuningDatabase>>
  openImpl(llvm::StringRef path, bool create);
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace ke

#endif // KE_DATABASE_DATABASE_H
