//===- TuneCommand.cpp - ke-opt tune --------------------------------------===//
//
// Tunes every workload of the inputs on this CPU or a GPU (CUDA or ROCm)
// (ke/Search/Tuner.h): evolutionary exploration, then droplet search, trials
// split across workloads by the task scheduler; every candidate goes to the
// tuning database as it is measured (so a killed run resumes), optionally
// to --records as JSON lines and to --log as CSV; live progress on stderr
// and a JSON summary on stdout.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Database/Database.h"
#include "ke/Distributed/DistributedTuning.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Search/Tuner.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

static cl::opt<unsigned> trials(
    "trials",
    cl::desc("Candidates measured per workload on average; the task "
             "scheduler splits trials x workloads among them, and records "
             "already in the database count"),
    cl::init(400), cl::sub(getTuneCommand()));
static cl::opt<unsigned> explore(
    "explore",
    cl::desc("Candidates explored per workload (evolutionary search with "
             "the cost model) before droplet search refines the best"),
    cl::init(300), cl::sub(getTuneCommand()));
static cl::opt<bool> stopWhenConverged(
    "stop-when-converged",
    cl::desc("End a workload's search when droplet search converges, even "
             "with budget left (by default the rest of the budget goes to new "
             "rounds of exploration, each followed by droplet search)"),
    cl::init(false), cl::sub(getTuneCommand()));
static cl::opt<unsigned> finalists(
    "final-check",
    cl::desc("After the search, re-time this many of its fastest candidates "
             "(those within --final-margin of the best) and the untuned "
             "default side by "
             "side, and keep the winner (default 3; 0: keep the fastest "
             "measured, no re-timing; docs/tuning.md, Final check)"),
    cl::init(3), cl::sub(getTuneCommand()));
static cl::opt<unsigned> finalRounds(
    "final-rounds",
    cl::desc("Alternating rounds of the final check (default 3): each "
             "finalist's time is its median round"),
    cl::init(3), cl::sub(getTuneCommand()));
static cl::opt<double> finalMargin(
    "final-margin",
    cl::desc("Finalists of the final check are recorded within this factor "
             "of the best (default 1.1)"),
    cl::init(1.1), cl::sub(getTuneCommand()));
static cl::opt<std::string> proposerCommand(
    "proposer-cmd",
    cl::desc("Ask this shell command for schedules in every exploration "
             "round: a JSON request on its stdin, JSON proposals on its "
             "stdout (docs/tuning.md, Proposals from outside the search)"),
    cl::value_desc("command"), cl::sub(getTuneCommand()));
static cl::opt<std::string> proposerUrl(
    "proposer-url",
    cl::desc("Ask this OpenAI-compatible chat completions endpoint for "
             "schedules (through curl; the key, if any, from "
             "$KE_PROPOSER_API_KEY)"),
    cl::value_desc("url"), cl::sub(getTuneCommand()));
static cl::opt<std::string> proposerModel(
    "proposer-model", cl::desc("The model --proposer-url asks for"),
    cl::sub(getTuneCommand()));
static cl::opt<unsigned> proposerPerRound(
    "proposer-per-round",
    cl::desc("Proposals asked for in each exploration round (default 8)"),
    cl::init(8), cl::sub(getTuneCommand()));
static cl::opt<double> proposerTimeout(
    "proposer-timeout",
    cl::desc("Seconds before a proposer call is abandoned (default 60)"),
    cl::init(60), cl::sub(getTuneCommand()));
static cl::opt<SearchStrategy> strategy(
    "search", cl::desc("Search strategy"),
    cl::values(clEnumValN(SearchStrategy::ExploreThenDroplet, "droplet",
                          "evolutionary exploration, then droplet search "
                          "(default)"),
               clEnumValN(SearchStrategy::Random, "random",
                          "uniformly random candidates (a baseline)")),
    cl::init(SearchStrategy::ExploreThenDroplet), cl::sub(getTuneCommand()));
static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("GPU targets: candidates built at once, each in a child "
                  "of its own, ahead of the one measured (default 0: the "
                  "cores but one, split among the MPI ranks of a node). The "
                  "CPU builds each candidate in its measuring child"),
         cl::init(0), cl::sub(getTuneCommand()));
static cl::opt<bool> measuringServer(
    "measuring-server",
    cl::desc("GPU targets: measure candidates in one long-lived child that "
             "keeps the device context and input sets (default); "
             "--measuring-server=false starts a child per candidate"),
    cl::init(true), cl::sub(getTuneCommand()));
static cl::opt<cl::boolOrDefault> concurrentRounds(
    "concurrent-rounds",
    cl::desc("Search while the devices measure: rounds of different "
             "workloads run at once, one device each, and the next round is "
             "searched while the last is measured (the default on GPU "
             "targets, in one process and under mpirun); "
             "--concurrent-rounds=false runs one round after another (under "
             "mpirun each split across all ranks), the default on CPU "
             "targets, whose measurements need the cores the search would "
             "take"),
    cl::sub(getTuneCommand()));
static cl::opt<unsigned> liveMeasuringServers(
    "live-measuring-servers",
    cl::desc("GPU targets: measuring servers (one per workload) kept "
             "running at once, each with a device context and its input "
             "sets on the device; the least recently used beyond it is "
             "stopped (default 4; lower it on a GPU with little memory)"),
    cl::init(4), cl::sub(getTuneCommand()));
static cl::opt<unsigned> transferSamples(
    "transfer-samples",
    cl::desc("Warm-start each workload's cost model with up to this many "
             "trials of other workloads on the target in the database "
             "(default 2000; 0: start empty)"),
    cl::init(2000), cl::sub(getTuneCommand()));
static cl::opt<bool> noDb("no-db",
                          cl::desc("Neither read nor write a tuning "
                                   "database"),
                          cl::sub(getTuneCommand()));
static cl::opt<std::string> logFile(
    "log", cl::desc("Write the convergence curve (trial, best time) as CSV"),
    cl::value_desc("file.csv"), cl::sub(getTuneCommand()));
static cl::opt<std::string> recordsFile(
    "records", cl::desc("Append every candidate to this JSON-lines file"),
    cl::value_desc("file"), cl::sub(getTuneCommand()));
static cl::opt<double> timeout("timeout",
                               cl::desc("Seconds before a candidate is "
                                        "killed"),
                               cl::init(60), cl::sub(getTuneCommand()));
static cl::opt<double> minSeconds(
    "min-seconds", cl::desc("Timed runs of a candidate add up to at least "
                            "this many seconds (default 0.1 on the CPU, "
                            "0.05 on GPUs)"),
    cl::init(0.1), cl::sub(getTuneCommand()));
static cl::opt<int> deviceOrdinal(
    "device", cl::desc("The GPU to measure on (cuda and rocm targets)"),
    cl::init(0), cl::sub(getTuneCommand()));
static cl::opt<bool> noProgress("no-progress",
                                cl::desc("No progress line on stderr"),
                                cl::sub(getTuneCommand()));

/// The options of this run that do not depend on its outputs (every rank
/// of an MPI run makes the same).
static TuneOptions getTuneOptions(bool gpu, int device,
                                  const MpiWorld *world) {
  TuneOptions options;
  options.trials = trials;
  options.explore = std::min(explore.getValue(), trials.getValue());
  options.strategy = strategy;
  options.stopWhenConverged = stopWhenConverged;
  options.finalCheck.finalists = finalists;
  options.finalCheck.rounds = finalRounds;
  options.finalCheck.margin = std::max(1.0, finalMargin.getValue());
  options.proposer.command = proposerCommand;
  options.proposer.url = proposerUrl;
  options.proposer.model = proposerModel;
  options.proposer.perRound = proposerPerRound;
  options.proposer.timeoutSeconds = proposerTimeout;
  options.seed = seedOption;
  options.transferSamples = transferSamples;
  options.showProgress = !noProgress;
  options.evaluator.timeoutSeconds = timeout;
  options.evaluator.measure.minTotalSeconds = minSeconds;
  options.evaluator.deviceOrdinal = device;
  options.evaluator.jobs = jobs;
  options.evaluator.measuringServer = measuringServer;
  options.evaluator.liveMeasuringServers =
      std::max(1u, liveMeasuringServers.getValue());
  // Ranks that share a node share its cores: each builds on its part.
  if (world && !jobs && world->getLocalSize() > 1)
    options.evaluator.jobs = std::max(
        1u, getDefaultBuildJobs() / unsigned(world->getLocalSize()));
  options.evaluator.reference = getReferencePlace();
  // GPU runs are short: the protocol's floor there is 50 ms.
  if (gpu && !minSeconds.getNumOccurrences())
    options.evaluator.measure.minTotalSeconds = 0.05;
  return options;
}

/// The GPU a rank measures on: the node-local rank's (offset by --device),
/// or --device itself when the launcher left the rank one visible device
/// (Slurm's --gpus-per-task binds each rank to its own).
static int getRankDevice(const MpiWorld *world) {
  if (!world)
    return deviceOrdinal;
  for (const char *name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                           "ROCR_VISIBLE_DEVICES"})
    if (std::optional<std::string> visible = llvm::sys::Process::GetEnv(name))
      if (!visible->empty() && !llvm::StringRef(*visible).contains(','))
        return deviceOrdinal;
  return deviceOrdinal + world->getLocalRank();
}

/// How records name the rank and device that measured them.
static std::string describeRank(const MpiWorld &world,
                                const std::optional<MeasuredTarget> &measured) {
  std::string where = llvm::formatv("rank {0} on {1}: ", world.getRank(),
                                    world.getNodeName())
                          .str();
  if (!measured)
    return where + "no device";
  if (measured->device)
    return where + measured->device->description;
  return where + "cpu " + measured->target.chip;
}

/// A serving rank of an MPI run (ke/Distributed/DistributedTuning.h): the
/// same target and inputs as rank 0, its own device, no outputs of its own.
static int serveAsRank(MpiWorld &world) {
  ServingRank self;
  int device = getRankDevice(&world);
  std::optional<MeasuredTarget> measured =
      prepareMeasuredTarget("tune", "tuning", device, /*announce=*/false);
  if (!measured)
    self.setupError = llvm::formatv("its device #{0} did not probe (its "
                                    "stderr says why)",
                                    device);
  self.measuredBy = describeRank(world, measured);
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs;
  if (measured) {
    inputs = loadInputs(inputFiles, *context);
    if (inputs.failed)
      self.setupError = "its inputs did not load";
  }
  TargetDescription target = measured ? measured->target : TargetDescription();
  TuneOptions options = getTuneOptions(target.isGpu(), device, &world);
  options.showProgress = false;
  if (llvm::Error error =
          serveTuning(world, inputs.workloads, target, options, self)) {
    subcommandError("tune") << "rank " << world.getRank() << ": "
                            << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return 0;
}

int ke::runTuneCommand() {
  // Under mpirun every rank runs this command; rank 0 tunes, the others
  // serve it (docs/tuning.md, Tuning on a cluster).
  std::unique_ptr<MpiWorld> world;
  if (isLaunchedByMpi()) {
    llvm::Expected<std::unique_ptr<MpiWorld>> created = MpiWorld::create();
    if (!created) {
      subcommandError("tune") << "started by an MPI launcher, but "
                              << llvm::toString(created.takeError()) << "\n";
      return 1;
    }
    world = std::move(*created);
    if (world->getRank() != 0)
      return serveAsRank(*world);
  }
  // Declared after the world: it stops the serving ranks on every return
  // before MPI is finalized.
  std::optional<TuningCoordinator> coordinator;
  if (world)
    coordinator.emplace(world.get(), "");
  int ordinal = getRankDevice(world.get());
  std::optional<MeasuredTarget> measured =
      prepareMeasuredTarget("tune", "tuning", ordinal, !noProgress);
  if (!measured)
    return 1;
  // checkGpuDevice put the device's own limits into the target.
  const TargetDescription &target = measured->target;
  const std::optional<ProbedGpu> &device = measured->device;
  bool gpu = target.isGpu();
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

  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!logFile.empty()) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(logFile, ec,
                                                 llvm::sys::fs::OF_Text);
    if (ec) {
      subcommandError("tune") << logFile << ": " << ec.message() << "\n";
      return 1;
    }
  }
  if (!proposerCommand.empty() && !proposerUrl.empty()) {
    subcommandError("tune")
        << "--proposer-cmd and --proposer-url exclude each other\n";
    return 1;
  }
  if ((!proposerCommand.empty() || !proposerUrl.empty()) &&
      strategy == SearchStrategy::Random) {
    subcommandError("tune") << "a proposer needs --search=droplet (it is a "
                               "mutation operator of the exploration)\n";
    return 1;
  }

  std::unique_ptr<TuningDatabase> database;
  if (!noDb) {
    std::string path = getDatabasePath();
    llvm::Expected<std::unique_ptr<TuningDatabase>> opened =
        TuningDatabase::open(path);
    if (!opened) {
      subcommandError("tune") << llvm::toString(opened.takeError()) << "\n";
      return 1;
    }
    database = std::move(*opened);
  }

  TuneOptions options = getTuneOptions(gpu, ordinal, world.get());
  options.records = records.get();
  options.log = log.get();
  options.database = database.get();
  if (world) {
    coordinator->setMeasuredBy(describeRank(*world, measured));
    options.createEvaluator = coordinator->getEvaluatorFactory();
    if (!gpu && world->getLocalSize() > 1 && !noProgress)
      llvm::errs() << "[ke] " << world->getLocalSize()
                   << " ranks share this node's cores: their CPU timings "
                      "disturb each other (run one rank per node for cpu "
                      "targets)\n";
  }

  bool concurrent = concurrentRounds == cl::BOU_UNSET
                        ? gpu
                        : concurrentRounds == cl::BOU_TRUE;
  if (concurrent) {
    if (!coordinator) {
      // One process: its device serves two rounds in turn.
      coordinator.emplace(nullptr, "");
      options.createEvaluator = coordinator->getEvaluatorFactory();
      if (!gpu && !noProgress)
        llvm::errs() << "[ke] --concurrent-rounds on a cpu target: the "
                        "search disturbs the timings on this machine's "
                        "cores\n";
    }
    options.concurrent = coordinator->getConcurrentRounds();
  }

  llvm::json::Array results;
  unsigned totalTrials = 0;
  double searchSeconds = 0;
  options.searchWallSeconds = &searchSeconds;
  std::optional<ProposerStats> proposer;
  for (const TuningResult &result :
       tuneWorkloads(inputs.workloads, target, options)) {
    results.push_back(result.toJSON());
    totalTrials += result.trials;
    if (result.proposer) {
      // The run's totals, beside each workload's own.
      if (!proposer)
        proposer.emplace();
      proposer->calls += result.proposer->calls;
      proposer->failedCalls += result.proposer->failedCalls;
      proposer->proposed += result.proposer->proposed;
      proposer->accepted += result.proposer->accepted;
      proposer->rejected += result.proposer->rejected;
      for (const std::string &message : result.proposer->messages)
        proposer->addMessage(message);
    }
  }
  llvm::json::Object summary{{"target", target.name},
                             {"chip", target.chip},
                             {"search", strategy == SearchStrategy::Random
                                            ? "random"
                                            : "droplet"},
                             {"trials_per_workload", trials.getValue()},
                             {"explore", options.explore},
                             {"database", database ? llvm::json::Value(
                                                         getDatabasePath())
                                                   : llvm::json::Value(nullptr)},
                             {"seed", seedOption.getValue()},
                             {"trials", totalTrials},
                             {"search_seconds", searchSeconds},
                             {"trials_per_minute",
                              searchSeconds > 0
                                  ? llvm::json::Value(totalTrials /
                                                      searchSeconds * 60)
                                  : llvm::json::Value(nullptr)},
                             {"device", device ? device->info
                                               : llvm::json::Value(nullptr)},
                             // Builds at once (GPU targets; the CPU builds
                             // in the measuring child).
                             {"measuring_server",
                              gpu && options.evaluator.measuringServer},
                             {"live_measuring_servers",
                              options.evaluator.liveMeasuringServers},
                             {"jobs", gpu ? (options.evaluator.jobs
                                                     ? options.evaluator.jobs
                                                     : getDefaultBuildJobs())
                                          : 1u},
                             {"workloads", std::move(results)}};
  if (proposer)
    summary["proposer"] = proposer->toJSON();
  summary["concurrent_rounds"] = bool(options.concurrent);
  if (world)
    summary["ranks"] = world->getSize();
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(summary)))
               << "\n";
  return 0;
}
