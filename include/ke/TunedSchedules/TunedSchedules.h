//===- TunedSchedules.h - Tuned schedules in the database -------*- C++ -*-===//
//
// The one place where tuning records become schedules and schedules become
// records. Everything that reads the tuning database for a schedule (the
// apply pass, `ke-opt compile` for GPUs, `bench`, `tune` resuming a search)
// goes through chooseSchedule or readRecordSchedule, and everything that
// writes one goes through makeScheduleRecord, so that all of them agree on:
//   - which lowering a record belongs to (getPipelineHash: records made
//     under another are stale, and count as misses with a remark that says
//     so);
//   - which ops a target measures and schedules together with an anchor
//     (getKernelFusion);
//   - what happens when a record does not fit (the default schedule, with
//     the reason in words) and when the database cannot be read (an error).
//
//===----------------------------------------------------------------------===//
#ifndef KE_TUNEDSCHEDULES_TUNEDSCHEDULES_H
#define KE_TUNEDSCHEDULES_TUNEDSCHEDULES_H

#include "ke/Database/Database.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Target/Target.h"
#include "ke/Workload/Kernel.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace ke {

/// The hash of the lowering that kernels for `target` are built with
/// (getCpuPipelineHash, getGpuPipelineHash): records are looked up under it.
std::string getPipelineHash(const TargetDescription &target);

/// Which neighbours of an anchor join its kernel on `target`, both when it
/// is measured and when its schedule is applied: RowReductions for GPU
/// targets (their rules give each row a block), Elementwise for CPUs.
KernelFusion getKernelFusion(const TargetDescription &target);

/// The tuning database that `ke-opt compile` and `bench` read: `explicitPath`
/// (from --db) when given, else $KE_DB, else ke-tuning.db in the working
/// directory when there is one. An explicit or $KE_DB path must exist (a
/// mistyped path must not silently mean "no records"): otherwise an error
/// "tuning database 'P' does not exist". An empty result: no database.
llvm::Expected<std::string> resolveDatabasePath(llvm::StringRef explicitPath);

/// Opens the existing database at `path` for reading schedules; null for an
/// empty path. Fails with "tuning database 'P' does not exist" or "cannot
/// open the tuning database 'P': WHY".
llvm::Expected<std::unique_ptr<TuningDatabase>>
openScheduleDatabase(llvm::StringRef path);

/// Where a chosen schedule comes from.
enum class ScheduleOrigin {
  /// The best record of the workload under this ke's pipeline hash.
  Tuned,
  /// The default schedule: no database was given.
  NoDatabase,
  /// The default schedule: the database has no valid record of the workload
  /// on the target.
  NoRecord,
  /// The default schedule: the workload's valid records were all made under
  /// another pipeline hash (the lowering changed since they were measured).
  StaleRecords,
  /// The default schedule: the best record names a sketch or knobs that
  /// this ke's rules do not have.
  UnfitRecord,
};

/// The schedule of one kernel and why it was chosen.
struct ChosenSchedule {
  Schedule schedule;
  ScheduleOrigin origin = ScheduleOrigin::NoDatabase;
  /// The record the schedule was rebuilt from (Tuned), or the one that did
  /// not fit (UnfitRecord).
  std::optional<TuningRecord> record;
  /// Why the default schedule was chosen, in words for a remark ("no tuned
  /// record for workload K", "the tuned records for workload K are stale:
  /// ..."); empty for Tuned.
  std::string whyDefault;

  bool isTuned() const { return origin == ScheduleOrigin::Tuned; }
  /// The remark that says which schedule a kernel got: "ke: applied tuned
  /// schedule S (median T s, record from DB)" or "ke: WHY; applied the
  /// default schedule S".
  std::string getRemark(llvm::StringRef databasePath) const;
};

/// The schedule of the kernel of workload `key` on `target`, built for
/// `kernelAnchor` (the anchor of its kernel module, grouped with
/// getKernelFusion(target)): the best record of `key` in `database` under
/// getPipelineHash(target) when it rebuilds for this ke's rules, else the
/// default schedule with the reason. `database` may be null (defaults
/// only). Fails only when the database cannot be read, with an error that
/// names `databasePath`. std::nullopt when no sketch rule applies to the
/// anchor (getDefaultSchedule has remarked at it).
llvm::Expected<std::optional<ChosenSchedule>>
chooseSchedule(TuningDatabase *database, llvm::StringRef databasePath,
               mlir::Operation *kernelAnchor, llvm::StringRef key,
               const TargetDescription &target);

/// The database form of `schedule` (null for the reference), written for
/// `kernelAnchor` as `script`, of workload `key` on `target`: key, target,
/// device, ke and LLVM versions, pipeline hash, sketch, knobs and script,
/// with `role`. The outcome (times, error class, message) is the caller's
/// to fill in.
TuningRecord makeScheduleRecord(const Schedule *schedule,
                                llvm::StringRef script, llvm::StringRef key,
                                const TargetDescription &target,
                                llvm::StringRef role);

/// The schedule of `record`, rebuilt for `kernelAnchor`: fails for records
/// of sketches or knob spaces that this ke's rules do not have.
llvm::Expected<Schedule> readRecordSchedule(const TuningRecord &record,
                                            mlir::Operation *kernelAnchor,
                                            const TargetDescription &target);

} // namespace ke

#endif // KE_TUNEDSCHEDULES_TUNEDSCHEDULES_H
