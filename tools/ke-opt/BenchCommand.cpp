//===- BenchCommand.cpp - ke-opt bench ------------------------------------===//
//
// Per workload: the reference (unscheduled linalg lowered to loops), the
// untuned default schedule and, with --records, the best recorded schedule,
// each re-built, checked against the reference and timed in this run.
// (From issue #4 on, the tuned schedule comes from the database.)
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Search/Evaluator.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LineIterator.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

static cl::opt<std::string> benchRecords(
    "records", cl::desc("JSON-lines records of `ke-opt tune`: bench the best "
                        "valid schedule recorded for each workload"),
    cl::value_desc("file"), cl::sub(getBenchCommand()));
static cl::opt<double> benchMinSeconds(
    "min-seconds", cl::desc("Timed runs add up to at least this many seconds"),
    cl::init(0.2), cl::sub(getBenchCommand()));

/// The fastest valid schedule per workload key in a records file.
static std::map<std::string, llvm::json::Value>
readBestSchedules(llvm::StringRef path, bool &ok) {
  std::map<std::string, llvm::json::Value> best;
  std::map<std::string, double> bestSeconds;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    subcommandError("bench") << path << ": " << buffer.getError().message()
                             << "\n";
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
    std::optional<llvm::StringRef> key = o ? o->getString("workload") : std::nullopt;
    std::optional<double> seconds = o ? o->getNumber("median_seconds") : std::nullopt;
    const llvm::json::Value *schedule = o ? o->get("schedule") : nullptr;
    if (!key || !seconds || !schedule || !schedule->getAsObject() ||
        o->getString("error") != "none")
      continue;
    auto it = bestSeconds.find(key->str());
    if (it == bestSeconds.end() || *seconds < it->second) {
      bestSeconds[key->str()] = *seconds;
      best.insert_or_assign(key->str(), *schedule);
    }
  }
  return best;
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
  std::optional<TargetDescription> target = parseTargetOption("bench");
  if (!target)
    return 1;
  if (!target->isCpu() || !target->detectedFromHost) {
    subcommandError("bench") << "bench measures on this machine: use "
                                "--target=cpu\n";
    return 1;
  }
  if (!requireInputFiles("bench"))
    return 1;
  bool ok = true;
  std::map<std::string, llvm::json::Value> tuned;
  if (!benchRecords.empty())
    tuned = readBestSchedules(benchRecords, ok);
  if (!ok)
    return 1;
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs = loadInputs(inputFiles, *context);
  if (inputs.failed)
    return 1;

  EvaluatorOptions options;
  options.seed = seedOption;
  options.measure.minTotalSeconds = benchMinSeconds;
  llvm::json::Array results;
  bool allCorrect = true;
  for (const Workload &workload : inputs.workloads) {
    llvm::json::Object row{{"key", workload.key}, {"op", workload.opName}};
    if (workload.flops)
      row["flops"] = *workload.flops;
    llvm::errs() << "[ke] bench " << workload.opName << " (" << workload.key
                 << ")\n";
    FailureOr<std::unique_ptr<CpuEvaluator>> evaluator =
        CpuEvaluator::create(workload.firstOp, *target, options);
    if (failed(evaluator)) {
      row["skipped"] = "cannot be evaluated (see the error above)";
      results.push_back(std::move(row));
      continue;
    }
    Operation *anchor = (*evaluator)->getKernelAnchor();
    CandidateRecord reference = (*evaluator)->evaluateReference();
    row["reference"] = describe(reference);
    FailureOr<Schedule> untuned = getDefaultSchedule(anchor, *target);
    std::optional<CandidateRecord> untunedRecord, tunedRecord;
    if (succeeded(untuned)) {
      untunedRecord = (*evaluator)->evaluate(*untuned);
      row["untuned"] = describe(*untunedRecord);
      allCorrect &= untunedRecord->error != ErrorClass::WrongResult;
    }
    auto it = tuned.find(workload.key);
    if (it != tuned.end()) {
      llvm::Expected<Schedule> schedule =
          scheduleFromJSON(it->second, anchor, *target);
      if (!schedule) {
        row["tuned"] = llvm::json::Object{
            {"status", "stale-record"},
            {"message", llvm::toString(schedule.takeError())}};
      } else {
        tunedRecord = (*evaluator)->evaluate(*schedule);
        row["tuned"] = describe(*tunedRecord);
        row["tuned_schedule"] = schedule->toJSON();
        allCorrect &= tunedRecord->error != ErrorClass::WrongResult;
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
  llvm::json::Object summary{{"target", target->name},
                             {"chip", target->chip},
                             {"workloads", std::move(results)}};
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(summary)))
               << "\n";
  return allCorrect ? 0 : 1;
}
