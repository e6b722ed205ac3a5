//===- TuneCommand.cpp - ke-opt tune --------------------------------------===//
//
// Tunes every workload of the inputs on this CPU with random search (issue
// #4 brings evolutionary exploration, droplet search and the database):
// live progress on stderr, every candidate optionally to --records as JSON
// lines, and a JSON summary on stdout.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Search/RandomSearch.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

static cl::opt<unsigned> trials("trials",
                                cl::desc("Random candidates per workload"),
                                cl::init(200), cl::sub(getTuneCommand()));
static cl::opt<unsigned> explore(
    "explore",
    cl::desc("Candidates explored before coordinate descent (issue #4; "
             "random search explores all trials)"),
    cl::init(300), cl::sub(getTuneCommand()));
static cl::opt<unsigned> jobs("jobs",
                              cl::desc("Parallel builds (issue #4; builds "
                                       "run one at a time for now)"),
                              cl::init(0), cl::sub(getTuneCommand()));
static cl::opt<std::string> recordsFile(
    "records", cl::desc("Append every candidate to this JSON-lines file"),
    cl::value_desc("file"), cl::sub(getTuneCommand()));
static cl::opt<double> timeout("timeout",
                               cl::desc("Seconds before a candidate is "
                                        "killed"),
                               cl::init(60), cl::sub(getTuneCommand()));
static cl::opt<double> minSeconds(
    "min-seconds", cl::desc("Timed runs of a candidate add up to at least "
                            "this many seconds"),
    cl::init(0.1), cl::sub(getTuneCommand()));
static cl::opt<bool> noProgress("no-progress",
                                cl::desc("No progress line on stderr"),
                                cl::sub(getTuneCommand()));

int ke::runTuneCommand() {
  std::optional<TargetDescription> target = parseTargetOption("tune");
  if (!target)
    return 1;
  if (!target->isCpu() || !target->detectedFromHost) {
    subcommandError("tune")
        << "tuning measures on this machine: use --target=cpu (GPU tuning "
           "arrives with issues #5 and #6)\n";
    return 1;
  }
  if (!requireInputFiles("tune"))
    return 1;
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs = loadInputs(inputFiles, *context);
  if (inputs.failed)
    return 1;

  std::unique_ptr<llvm::raw_fd_ostream> records;
  if (!recordsFile.empty()) {
    std::error_code ec;
    records = std::make_unique<llvm::raw_fd_ostream>(
        recordsFile, ec, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text);
    if (ec) {
      subcommandError("tune") << recordsFile << ": " << ec.message() << "\n";
      return 1;
    }
  }

  TuneOptions options;
  options.trials = trials;
  options.seed = seedOption;
  options.records = records.get();
  options.showProgress = !noProgress;
  options.evaluator.timeoutSeconds = timeout;
  options.evaluator.measure.minTotalSeconds = minSeconds;

  llvm::json::Array results;
  unsigned index = 0;
  for (const Workload &workload : inputs.workloads) {
    TuningResult result = tuneWithRandomSearch(
        workload, *target, options, index++, inputs.workloads.size());
    if (!result.skipped.empty())
      llvm::errs() << "[ke] skipping " << workload.opName << " ("
                   << workload.key << "): " << result.skipped << "\n";
    results.push_back(result.toJSON());
  }
  llvm::json::Object summary{{"target", target->name},
                             {"chip", target->chip},
                             {"search", "random"},
                             {"trials_per_workload", trials.getValue()},
                             {"seed", seedOption.getValue()},
                             {"workloads", std::move(results)}};
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(summary)))
               << "\n";
  return 0;
}
