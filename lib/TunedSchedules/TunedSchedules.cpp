//===- TunedSchedules.cpp - Tuned schedules in and out of the database ----===//
//
// Map of this file:
//   getPipelineHash, getKernelFusion   what records and kernels are keyed by
//   resolveDatabasePath,               which database compile and bench read
//     openScheduleDatabase
//   chooseSchedule                     record -> schedule, or the default
//                                      with the reason (one error policy)
//   makeScheduleRecord,                schedule -> record, record -> schedule
//     readRecordSchedule
//
//===----------------------------------------------------------------------===//

#include "ke/TunedSchedules/TunedSchedules.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Config.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#define DEBUG_TYPE "ke-tuned-schedules"

using namespace mlir;
using namespace ke;

std::string ke::getPipelineHash(const TargetDescription &target) {
  return target.isGpu() ? getGpuPipelineHash(target) : getCpuPipelineHash();
}

KernelFusion ke::getKernelFusion(const TargetDescription &target) {
  // Row reductions join the elementwise op that reads them: gpu.rownorm
  // gives each row a block, cpu.rows each block of rows a pass. Not on
  // vector-length-agnostic SVE (cpu:aarch64), where cpu.rows' row tiles
  // would be fixed-length and cpu.tile vectorizes the separate kernels
  // with scalable vectors (test/aarch64/check-sve.py).
  if (target.isGpu())
    return KernelFusion::RowReductionsInternalAccumulators;
  return target.cpu.scalableVectors ? KernelFusion::Elementwise
                                    : KernelFusion::RowReductions;
}

llvm::Expected<std::string>
ke::resolveDatabasePath(llvm::StringRef explicitPath) {
  std::string path = explicitPath.str();
  if (path.empty())
    path = llvm::sys::Process::GetEnv("KE_DB").value_or("");
  if (path.empty())
    return llvm::sys::fs::exists("ke-tuning.db") ? "ke-tuning.db" : "";
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError("tuning database '" + path +
                                   "' does not exist");
  return path;
}

llvm::Expected<std::unique_ptr<TuningDatabase>>
ke::openScheduleDatabase(llvm::StringRef path) {
  if (path.empty())
    return nullptr;
  // TuningDatabase::open would create a missing file: a reader must not.
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError("tuning database '" + path +
                                   "' does not exist");
  llvm::Expected<std::unique_ptr<TuningDatabase>> database =
      TuningDatabase::openExisting(path);
  if (!database)
    return llvm::createStringError(
        "cannot open the tuning database '" + path +
        "': " + llvm::toString(database.takeError()));
  return database;
}

std::string ChosenSchedule::getRemark(llvm::StringRef databasePath) const {
  if (isTuned())
    return llvm::formatv("ke: applied tuned schedule {0} (median {1:e3} s, "
                         "record from {2})",
                         schedule.describe(), record->medianSeconds,
                         databasePath)
        .str();
  return "ke: " + whyDefault + "; applied the default schedule " +
         schedule.describe();
}

/// An error that names the database that could not be read.
static llvm::Error readError(llvm::StringRef databasePath, llvm::Error error) {
  return llvm::createStringError("cannot read the tuning database '" +
                                 databasePath +
                                 "': " + llvm::toString(std::move(error)));
}

llvm::Expected<std::optional<ChosenSchedule>>
ke::chooseSchedule(TuningDatabase *database, llvm::StringRef databasePath,
                   Operation *kernelAnchor, llvm::StringRef key,
                   const TargetDescription &target) {
  ChosenSchedule chosen;
  chosen.whyDefault = "no tuning database given";
  if (database) {
    std::string hash = getPipelineHash(target);
    llvm::Expected<std::optional<TuningRecord>> best =
        database->getBest(key, target.name, hash);
    if (!best)
      return readError(databasePath, best.takeError());
    if (*best) {
      llvm::Expected<Schedule> tuned =
          readRecordSchedule(**best, kernelAnchor, target);
      chosen.record = std::move(**best);
      if (tuned) {
        chosen.schedule = std::move(*tuned);
        chosen.origin = ScheduleOrigin::Tuned;
        chosen.whyDefault.clear();
        LLVM_DEBUG(llvm::dbgs() << "[ke-tuned-schedules] " << key << ": record "
                                << chosen.schedule.describe() << "\n");
        return std::optional<ChosenSchedule>(std::move(chosen));
      }
      chosen.origin = ScheduleOrigin::UnfitRecord;
      chosen.whyDefault =
          ("the tuned record for workload " + key + " does not fit this ke (" +
           llvm::toString(tuned.takeError()) + ")")
              .str();
    } else {
      llvm::Expected<std::optional<TuningRecord>> any =
          database->getBest(key, target.name, /*pipelineHash=*/"");
      if (!any)
        return readError(databasePath, any.takeError());
      chosen.origin =
          *any ? ScheduleOrigin::StaleRecords : ScheduleOrigin::NoRecord;
      llvm::Expected<std::string> why =
          database->explainNoBest(key, target.name, hash);
      if (!why)
        return readError(databasePath, why.takeError());
      chosen.whyDefault = std::move(*why);
    }
  }
  LLVM_DEBUG(llvm::dbgs() << "[ke-tuned-schedules] " << key << ": default ("
                          << chosen.whyDefault << ")\n");
  FailureOr<Schedule> fallback = getDefaultSchedule(kernelAnchor, target);
  if (failed(fallback))
    return std::optional<ChosenSchedule>();
  chosen.schedule = std::move(*fallback);
  return std::optional<ChosenSchedule>(std::move(chosen));
}

TuningRecord ke::makeScheduleRecord(const Schedule *schedule,
                                    llvm::StringRef script, llvm::StringRef key,
                                    const TargetDescription &target,
                                    llvm::StringRef role) {
  TuningRecord r;
  r.workloadKey = key.str();
  r.target = target.name;
  r.device = target.chip;
  r.keVersion = KE_VERSION;
  r.llvmVersion = LLVM_VERSION_STRING;
  r.pipelineHash = getPipelineHash(target);
  r.role = role.str();
  if (schedule) {
    llvm::json::Value json = schedule->toJSON();
    const llvm::json::Object *o = json.getAsObject();
    assert(o && "Schedule::toJSON writes an object");
    r.sketch = o->getString("sketch").value_or("").str();
    if (const llvm::json::Object *knobs = o->getObject("knobs"))
      r.knobs =
          llvm::formatv("{0}", llvm::json::Value(llvm::json::Object(*knobs)));
    r.script = script.str();
  }
  return r;
}

llvm::Expected<Schedule>
ke::readRecordSchedule(const TuningRecord &record, Operation *kernelAnchor,
                       const TargetDescription &target) {
  return scheduleFromKnobsText(record.sketch, record.knobs, kernelAnchor,
                               target);
}
