//===- BenchCommand.cpp - ke-opt bench ------------------------------------===//
//
// Per workload: the reference (unscheduled linalg lowered to loops), the
// untuned default schedule and the best tuned schedule, each re-built,
// checked against the reference and timed in this run. The tuned schedule
// is the database's best record (--db, else $KE_DB, else ke-tuning.db when
// there is one), the same record `ke-opt compile` applies, or the best of a
// JSON-lines file of `ke-opt tune --records`. For a database record the
// recorded median is printed next to the re-measured one, and their ratio:
// the check that a record reproduces its time within noise.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Measure/Evaluator.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LineIterator.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

static cl::opt<std::string>
    benchRecords("records",
                 cl::desc("JSON-lines records of `ke-opt tune`: bench the best "
                          "valid schedule recorded for each workload"),
                 cl::value_desc("file"), cl::sub(getBenchCommand()));
static cl::opt<int> benchDevice(
    "device", cl::desc("The GPU to measure on (cuda and rocm targets)"),
    cl::init(0), cl::sub(getBenchCommand()));
static cl::opt<double>
    benchMinSeconds("min-seconds",
                    cl::desc("Timed runs add up to at least this many seconds"),
                    cl::init(0.2), cl::sub(getBenchCommand()));

/// The schedule compile would apply per workload key in a records file (the
/// database's rule, TuningDatabase::getBest): the fastest valid one among
/// the newest "final" record and the trial and untuned records after it.
static std::map<std::string, llvm::json::Value>
readBestSchedules(llvm::StringRef path, bool &ok) {
  std::map<std::string, llvm::json::Value> best;
  std::map<std::string, double> bestSeconds;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    subcommandError("bench")
        << path << ": " << buffer.getError().message() << "\n";
    ok = false;
    return best;
  }
  for (llvm::line_iterator line(**buffer); !line.is_at_end(); ++line) {
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(*line);
    if (!value) {
      llvm::consumeError(value.takeError());
      continue; // a line cut short by a kill: skip it
    }
    const llvm::json::Object *o = value->getAsObject();
    std::optional<llvm::StringRef> key =
        o ? o->getString("workload") : std::nullopt;
    std::optional<double> seconds =
        o ? o->getNumber("median_seconds") : std::nullopt;
    const llvm::json::Value *schedule = o ? o->get("schedule") : nullptr;
    std::optional<llvm::StringRef> role = o ? o->getString("role") : std::nullopt;
    if (!key || !seconds || !schedule || !schedule->getAsObject() ||
        o->getString("error") != "none" ||
        (role && !llvm::is_contained({"trial", "untuned", "final"}, *role)))
      continue;
    // A final record overrules the records before it.
    bool final = role == "final";
    auto it = bestSeconds.find(key->str());
    if (it == bestSeconds.end() || final || *seconds < it->second) {
      bestSeconds[key->str()] = *seconds;
      best.insert_or_assign(key->str(), *schedule);
    }
  }
  return best;
}

/// The database bench reads (resolveDatabasePath): --db, else $KE_DB, else
/// ke-tuning.db when there is one; none with --records unless --db asks for
/// both, which is an error. Sets `ok` to false after an error.
static std::unique_ptr<TuningDatabase> openBenchDatabase(std::string &path,
                                                         bool &ok) {
  if (!benchRecords.empty()) {
    if (!dbOption.empty()) {
      subcommandError("bench") << "--records and --db both name the tuned "
                                  "schedules; give one\n";
      ok = false;
    }
    return nullptr;
  }
  llvm::Expected<std::string> resolved = resolveDatabasePath(dbOption);
  if (!resolved) {
    subcommandError("bench") << llvm::toString(resolved.takeError()) << "\n";
    ok = false;
    return nullptr;
  }
  path = *resolved;
  llvm::Expected<std::unique_ptr<TuningDatabase>> db =
      openScheduleDatabase(path);
  if (!db) {
    subcommandError("bench") << llvm::toString(db.takeError()) << "\n";
    ok = false;
    return nullptr;
  }
  return std::move(*db);
}

/// The "tuned" status of a workload whose database schedule is not a
/// record: "no-record", or "stale-record" with why.
static llvm::json::Object describeMiss(const ChosenSchedule &chosen) {
  if (chosen.origin == ScheduleOrigin::NoRecord)
    return llvm::json::Object{{"status", "no-record"}};
  return llvm::json::Object{{"status", "stale-record"},
                            {"message", chosen.whyDefault}};
}

static llvm::json::Value describe(const CandidateRecord &record) {
  llvm::json::Object o{{"status", stringifyErrorClass(record.error)}};
  if (record.isValid()) {
    o["seconds"] = record.measurement.median;
    o["relative_error"] = record.relativeError;
  } else {
    o["message"] = record.message;
  }
  return o;
}

int ke::runBenchCommand() {
  std::optional<MeasuredTarget> measured = prepareMeasuredTarget(
      "bench", "bench", benchDevice, /*announce=*/true);
  if (!measured)
    return 1;
  // checkGpuDevice put the device's own limits into the target.
  const TargetDescription &target = measured->target;
  const std::optional<ProbedGpu> &device = measured->device;
  bool gpu = target.isGpu();
  bool ok = true;
  std::map<std::string, llvm::json::Value> tuned;
  if (!benchRecords.empty())
    tuned = readBestSchedules(benchRecords, ok);
  std::unique_ptr<TuningDatabase> database;
  std::string databasePath;
  if (ok)
    database = openBenchDatabase(databasePath, ok);
  if (!ok)
    return 1;
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs = loadInputs(inputFiles, *context);
  if (inputs.failed)
    return 1;

  EvaluatorOptions options;
  options.fusion = getKernelFusion(target);
  options.seed = seedOption;
  options.measure.minTotalSeconds = benchMinSeconds;
  options.deviceOrdinal = benchDevice;
  options.reference = getReferencePlace();
  // GPU runs are short: the protocol's floor there is 50 ms.
  if (gpu && !benchMinSeconds.getNumOccurrences())
    options.measure.minTotalSeconds = 0.05;
  llvm::json::Array results;
  bool allCorrect = true;
  for (const Workload &workload : inputs.workloads) {
    llvm::json::Object row{{"key", workload.key}, {"op", workload.opName}};
    if (workload.flops)
      row["flops"] = *workload.flops;
    // Measured (and applied) as part of another workload's kernel, as in
    // `ke-opt tune`.
    if (Operation *fusing =
            getFusingAnchor(workload.firstOp, getKernelFusion(target))) {
      row["fused_into"] = computeWorkloadKey(fusing);
      results.push_back(std::move(row));
      continue;
    }
    llvm::errs() << "[ke] bench " << workload.opName << " (" << workload.key
                 << ")\n";
    FailureOr<std::unique_ptr<Evaluator>> evaluator =
        createEvaluator(workload.firstOp, target, options);
    if (failed(evaluator)) {
      row["skipped"] = "cannot be evaluated (see the error above)";
      results.push_back(std::move(row));
      continue;
    }
    Operation *anchor = (*evaluator)->getKernelAnchor();
    CandidateRecord reference = (*evaluator)->evaluateReference();
    row["reference"] = describe(reference);
    FailureOr<Schedule> untuned = getDefaultSchedule(anchor, target);
    std::optional<CandidateRecord> untunedRecord, tunedRecord;
    if (succeeded(untuned)) {
      untunedRecord = (*evaluator)->evaluate(*untuned);
      row["untuned"] = describe(*untunedRecord);
      allCorrect &= untunedRecord->error != ErrorClass::WrongResult;
    }
    // The same record that compile applies (chooseSchedule), or the best of
    // a records file.
    std::optional<llvm::Expected<Schedule>> tunedSchedule;
    std::optional<double> recordedSeconds;
    if (database) {
      llvm::Expected<std::optional<ChosenSchedule>> chosen = chooseSchedule(
          database.get(), databasePath, anchor, workload.key, target);
      if (!chosen) {
        row["tuned"] =
            llvm::json::Object{{"status", "db-error"},
                               {"message", llvm::toString(chosen.takeError())}};
      } else if (*chosen && (*chosen)->isTuned()) {
        tunedSchedule = std::move((*chosen)->schedule);
        recordedSeconds = (*chosen)->record->medianSeconds;
      } else if (*chosen) {
        row["tuned"] = describeMiss(**chosen);
      }
    } else if (auto it = tuned.find(workload.key); it != tuned.end()) {
      tunedSchedule = scheduleFromJSON(it->second, anchor, target);
    }
    if (tunedSchedule) {
      llvm::Expected<Schedule> &schedule = *tunedSchedule;
      if (!schedule) {
        row["tuned"] = llvm::json::Object{
            {"status", "stale-record"},
            {"message", llvm::toString(schedule.takeError())}};
      } else {
        tunedRecord = (*evaluator)->evaluate(*schedule);
        row["tuned"] = describe(*tunedRecord);
        row["tuned_schedule"] = schedule->toJSON();
        allCorrect &= tunedRecord->error != ErrorClass::WrongResult;
        if (recordedSeconds && tunedRecord->isValid()) {
          double now = tunedRecord->measurement.median;
          row["recorded_seconds"] = *recordedSeconds;
          row["remeasured_over_recorded"] = now / *recordedSeconds;
          llvm::errs() << llvm::formatv(
              "[ke]   best record: recorded {0:e3} s, re-measured {1:e3} s "
              "({2:f2}x)\n",
              *recordedSeconds, now, now / *recordedSeconds);
        }
      }
    }
    auto speedup = [&](const std::optional<CandidateRecord> &fast,
                       const CandidateRecord &slow) -> llvm::json::Value {
      if (!fast || !fast->isValid() || !slow.isValid())
        return nullptr;
      return slow.measurement.median / fast->measurement.median;
    };
    row["untuned_speedup_over_reference"] = speedup(untunedRecord, reference);
    if (tunedRecord && untunedRecord)
      row["tuned_speedup_over_untuned"] = speedup(tunedRecord, *untunedRecord);
    results.push_back(std::move(row));
  }
  llvm::json::Object summary{{"target", target.name},
                             {"chip", target.chip},
                             {"device", device ? device->info
                                               : llvm::json::Value(nullptr)},
                             {"workloads", std::move(results)}};
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(summary)))
               << "\n";
  return allCorrect ? 0 : 1;
}
