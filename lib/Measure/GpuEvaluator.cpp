//===- GpuEvaluator.cpp - Build, check and time on a GPU ------------------===//
//
// Map of this file:
//   getDefaultGpuKernelBuilder   ke's GPU lowering, as the build step uses it
//   GpuEvaluator::create         input sets (a CpuEvaluator on the host), then
//                                the reference on the CPU or the device
//   DeviceSteps<Runtime>         one candidate on CUDA or HIP: lower; load
//                                (open, load), check, time; or the device
//                                reference: lower, load, run, write its
//                                outputs
//   GpuEvaluator::evaluateBatch  the scripts, then per candidate a build
//                                child (apply, lower, the binary to a file;
//                                up to `jobs` at once) and its measurement
//                                (load, check, time; one at a time) by the
//                                measuring server (serveMeasurement: one
//                                child keeps the device context and input
//                                sets across candidates) or a child of its
//                                own
//
//===----------------------------------------------------------------------===//

#include "ke/Measure/GpuEvaluator.h"

#include "CandidateSteps.h"
#include "GpuBinaryFile.h"

#include "ke/Runtime/ServingChild.h"

#include "ke/Codegen/GpuPipeline.h"
#include "ke/Codegen/GpuReference.h"
#include "ke/Runtime/CudaRunner.h"
#include "ke/Runtime/HipRunner.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace ke;

GpuKernelBuilder ke::getDefaultGpuKernelBuilder() {
  return
      [](ModuleOp kernel,
         const TargetDescription &target) -> llvm::Expected<GpuKernelBinary> {
        if (!target.isGpu())
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "no GPU lowering for '" + target.name +
                                             "'");
        // Diagnostics go to the candidate's collector; this is the summary.
        FailureOr<GpuKernelBinary> binary =
            lowerKernelToGpuBinary(kernel, target);
        if (failed(binary))
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         target.family == TargetFamily::Rocm
                                             ? "the ROCDL lowering failed"
                                             : "the NVPTX lowering failed");
        return std::move(*binary);
      };
}

bool ke::isBigReference(Operation *anchor,
                        llvm::ArrayRef<KernelArgument> arguments) {
  uint64_t bytes = 0;
  for (const KernelArgument &arg : arguments)
    if (std::optional<ElementKind> kind = getElementKind(arg.elementType))
      bytes += arg.numElements() * getElementBytes(*kind);
  std::optional<uint64_t> flops = countFlops(anchor);
  return bytes > kBigReferenceBytes || (flops && *flops > kBigReferenceFlops);
}

/// True for a contraction (a linalg op with a reduction loop whose body
/// multiplies) or a convolution of f32 inputs: what a +tf32 target runs in
/// TF32.
static bool isF32Contraction(Operation *anchor) {
  auto op = dyn_cast<linalg::LinalgOp>(anchor);
  // Convolutions too: gpu.wgmma runs channels-last ones as implicit GEMMs.
  return op &&
         (linalg::isaContractionOpInterface(op) ||
          linalg::isaConvolutionOpInterface(op)) &&
         llvm::all_of(op.getDpsInputs(), [](Value input) {
           return getElementTypeOrSelf(input.getType()).isF32();
         });
}

FailureOr<std::unique_ptr<GpuEvaluator>>
GpuEvaluator::create(Operation *anchor, const TargetDescription &target,
                     const EvaluatorOptions &options,
                     GpuKernelBuilder builder) {
  if (!target.isGpu())
    return anchor->emitError("the GPU evaluator measures GPU targets, not '")
           << target.name << "'";
  std::unique_ptr<GpuEvaluator> evaluator(new GpuEvaluator());
  evaluator->target = target;
  evaluator->host = detectHostTarget();
  evaluator->options = options;
  evaluator->options.tf32Results =
      target.allowTF32 && !target.tf32x3 && isF32Contraction(anchor);
  evaluator->builder = std::move(builder);
  // The input sets are the CPU path's, made by a CpuEvaluator of the host:
  // same seeds, same tolerances. Its reference runs on the CPU unless this
  // one runs on the device.
  FailureOr<std::unique_ptr<CpuEvaluator>> cpu = CpuEvaluator::create(
      anchor, evaluator->host, evaluator->options, /*runReference=*/false);
  if (failed(cpu))
    return failure();
  evaluator->cpu = std::move(*cpu);
  bool onDevice =
      options.reference == ReferencePlace::Device ||
      (options.reference == ReferencePlace::Auto &&
       isBigReference(anchor, evaluator->cpu->getKernel().arguments));
  if (onDevice) {
    std::string why;
    if (succeeded(evaluator->runDeviceReference(anchor, why)))
      return evaluator;
    if (options.reference == ReferencePlace::Device)
      return anchor->emitError("the device reference failed: ") << why;
    llvm::errs() << "ke: the device reference failed (" << why
                 << "); running the reference on this machine's CPU\n";
  }
  if (failed(evaluator->cpu->runReference(anchor)))
    return failure();
  evaluator->referenceOutputs = evaluator->cpu->getReferenceOutputs();
  evaluator->referenceRecord = evaluator->cpu->evaluateReference();
  return evaluator;
}

Operation *GpuEvaluator::getKernelAnchor() const {
  return cpu->getKernelAnchor();
}

CandidateRecord GpuEvaluator::evaluateReference() { return referenceRecord; }

namespace {

/// The device and module of one GPU family; the runner is the same
/// GpuRunner for both, so one candidate path serves both.
struct CudaRuntime {
  using Device = CudaDevice;
  using Module = CudaModule;
  using Runner = CudaRunner;
  static auto open(int ordinal) { return openCudaDevice(ordinal); }
};
struct HipRuntime {
  using Device = HipDevice;
  using Module = HipModule;
  using Runner = HipRunner;
  static auto open(int ordinal) { return openHipDevice(ordinal); }
};

/// What a candidate's child does once the schedule is applied, on one GPU
/// family.
template <typename Runtime> struct DeviceSteps {
  using RuntimeType = Runtime;
  using Device = typename Runtime::Device;
  using Module = typename Runtime::Module;
  using Runner = typename Runtime::Runner;

  /// What the build step makes; the runner needs the other two alive.
  struct Built {
    std::unique_ptr<Device> device;
    std::unique_ptr<Module> module;
    std::unique_ptr<Runner> runner;
  };

  llvm::raw_ostream &report;
  const TargetDescription &target;
  const CpuEvaluator &cpu;
  /// The reference's outputs for input set 0, in argument order.
  llvm::ArrayRef<std::optional<HostBuffer>> expected;
  const EvaluatorOptions &options;

  /// The error of the last fail() (None: none failed).
  ErrorClass failedWith = ErrorClass::None;

  void fail(ErrorClass error, const llvm::Twine &message) {
    failedWith = error;
    writeCandidateReport(report, error, message.str(), nullptr, 0);
  }

  /// The build step's lowering: the scheduled module to a binary.
  /// std::nullopt after writing the failure's report.
  std::optional<GpuKernelBinary>
  lower(ModuleOp scheduled, const GpuKernelBuilder &builder,
        const DiagnosticCollector &diagnostics) {
    llvm::Expected<GpuKernelBinary> binary = builder(scheduled, target);
    if (!binary) {
      std::string message = llvm::toString(binary.takeError());
      if (!diagnostics.text.empty())
        message += ": " + diagnostics.text;
      fail(ErrorClass::CompileError, message);
      return std::nullopt;
    }
    return std::move(*binary);
  }

  /// The rest of the build step: the device opened, the binary loaded, the
  /// runner set up on the input sets. std::nullopt after writing the
  /// failure's report.
  std::optional<Built> load(const GpuKernelBinary &binary) {
    Built built;
    llvm::Expected<std::unique_ptr<Device>> device =
        Runtime::open(options.deviceOrdinal);
    if (!device) {
      fail(ErrorClass::LaunchError, llvm::toString(device.takeError()));
      return std::nullopt;
    }
    built.device = std::move(*device);
    llvm::Expected<std::unique_ptr<Module>> module =
        Module::load(*built.device, binary);
    if (!module) {
      fail(ErrorClass::CompileError, llvm::toString(module.takeError()));
      return std::nullopt;
    }
    built.module = std::move(*module);
    llvm::Expected<std::unique_ptr<Runner>> runner = Runner::create(
        *built.module, cpu.getKernel().arguments, cpu.getInputSets());
    if (!runner) {
      fail(ErrorClass::LaunchError, llvm::toString(runner.takeError()));
      return std::nullopt;
    }
    built.runner = std::move(*runner);
    return built;
  }

  /// One run on input set 0 (also the warm-up), timed, its results
  /// downloaded into `results` (a full argument list). The run's seconds;
  /// std::nullopt after writing the failure's report.
  std::optional<double> runOnFirstSet(Runner &runner,
                                      std::vector<HostBuffer> &results) {
    // Host buffers for the results only: at KernelBench's sizes a copy of
    // the whole input set per candidate costs seconds and gigabytes.
    results.clear();
    for (const KernelArgument &arg : cpu.getKernel().arguments)
      results.emplace_back(arg.isResult() ? llvm::ArrayRef<int64_t>(arg.shape)
                                          : llvm::ArrayRef<int64_t>{0},
                           *getElementKind(arg.elementType));
    llvm::Expected<double> seconds = [&]() -> llvm::Expected<double> {
      if (llvm::Error error = runner.prepare(0))
        return std::move(error);
      if (llvm::Error error = runner.flushL2())
        return std::move(error);
      llvm::Expected<double> seconds = runner.runTimed();
      if (!seconds)
        return seconds.takeError();
      if (llvm::Error error = runner.download(results))
        return std::move(error);
      return *seconds;
    }();
    if (!seconds) {
      fail(ErrorClass::LaunchError, llvm::toString(seconds.takeError()));
      return std::nullopt;
    }
    return *seconds;
  }

  /// The check step: runOnFirstSet, its results checked against the
  /// reference (`worst`: the largest relative error).
  std::optional<double> check(Runner &runner, double &worst) {
    std::vector<HostBuffer> results;
    std::optional<double> seconds = runOnFirstSet(runner, results);
    if (!seconds || !checkAgainstReference(report, results, expected, worst,
                                           options.tf32Results))
      return std::nullopt;
    return seconds;
  }

  /// The time step: the runner's measurement protocol (events, L2 flushed,
  /// input sets rotated), or the checked run alone (early stop, timing
  /// budget; docs/measurement.md). Writes the report.
  void time(Runner &runner, double checkSeconds, double worst,
            std::optional<double> bestSeconds) {
    bool tooSlow = isFarSlowerThanBest(checkSeconds, bestSeconds, options);
    if (tooSlow || exceedsTimingBudget(checkSeconds, options))
      return writeSingleRunReport(report, checkSeconds, worst,
                                  /*earlyStop=*/tooSlow);
    MeasureOptions measureOptions = options.measure;
    measureOptions.warmupRuns = 0; // the checked run warmed up
    llvm::Expected<Measurement> measurement =
        runner.measure(measureOptions, /*firstSet=*/1);
    if (!measurement)
      return fail(ErrorClass::LaunchError,
                  llvm::toString(measurement.takeError()));
    writeCandidateReport(report, ErrorClass::None, "", &*measurement, worst);
  }

  /// The device reference's steps: build, one run on input set 0, its
  /// results written to `path`; the run is the record's one time.
  void runReference(ModuleOp kernel, const GpuKernelBuilder &builder,
                    const DiagnosticCollector &diagnostics,
                    llvm::StringRef path) {
    std::optional<GpuKernelBinary> binary =
        lower(kernel, builder, diagnostics);
    if (!binary)
      return;
    std::optional<Built> built = load(*binary);
    if (!built)
      return;
    std::vector<HostBuffer> results;
    std::optional<double> seconds = runOnFirstSet(*built->runner, results);
    if (seconds && writeReferenceOutputs(report, path,
                                         cpu.getKernel().arguments, results))
      writeSingleRunReport(report, *seconds, 0, /*earlyStop=*/false);
  }

  /// The measuring server's device and runner, kept from one candidate to
  /// the next (its input sets uploaded once).
  struct Session {
    std::unique_ptr<Device> device;
    std::unique_ptr<Runner> runner;
  };

  /// The measuring server's steps for one built binary: the device opened
  /// and the input sets uploaded for the first, then load, check and time
  /// as run() does. False when the device may be unusable after it (a
  /// launch error: a fault poisons the context), so the server ends.
  /// The server's warm-up: opens the device (driver, context) before the
  /// first binary is built. A failure is left to the first request, which
  /// tries again and reports it.
  void openSession(Session &session) {
    if (session.device)
      return;
    llvm::Expected<std::unique_ptr<Device>> device =
        Runtime::open(options.deviceOrdinal);
    if (device)
      session.device = std::move(*device);
    else
      llvm::consumeError(device.takeError());
  }

  bool runInSession(Session &session, const GpuKernelBinary &binary,
                    std::optional<double> bestSeconds) {
    if (!session.device) {
      llvm::Expected<std::unique_ptr<Device>> device =
          Runtime::open(options.deviceOrdinal);
      if (!device) {
        fail(ErrorClass::LaunchError, llvm::toString(device.takeError()));
        return false;
      }
      session.device = std::move(*device);
    }
    llvm::Expected<std::unique_ptr<Module>> module =
        Module::load(*session.device, binary);
    if (!module) {
      fail(ErrorClass::CompileError, llvm::toString(module.takeError()));
      return true;
    }
    if (!session.runner) {
      llvm::Expected<std::unique_ptr<Runner>> runner = Runner::create(
          **module, cpu.getKernel().arguments, cpu.getInputSets());
      if (!runner) {
        fail(ErrorClass::LaunchError, llvm::toString(runner.takeError()));
        return false;
      }
      session.runner = std::move(*runner);
    } else if (llvm::Error error = session.runner->setModule(**module)) {
      fail(ErrorClass::LaunchError, llvm::toString(std::move(error)));
      return false;
    }
    double worst = 0;
    if (std::optional<double> checkSeconds = check(*session.runner, worst))
      time(*session.runner, *checkSeconds, worst, bestSeconds);
    return failedWith != ErrorClass::LaunchError;
  }

  /// The measuring child's steps: load, check and time a built binary.
  void run(const GpuKernelBinary &binary, std::optional<double> bestSeconds) {
    std::optional<Built> built = load(binary);
    if (!built)
      return;
    double worst = 0;
    if (std::optional<double> checkSeconds = check(*built->runner, worst))
      time(*built->runner, *checkSeconds, worst, bestSeconds);
  }
};

} // namespace

/// Runs `steps` in a child for `target`'s family, with a new DeviceSteps.
/// CUDA and HIP are initialized in this child only: the parent forks again
/// for the next candidate, and a forked GPU runtime state is unusable.
template <typename Fn>
static void runDeviceSteps(const TargetDescription &target,
                           llvm::raw_ostream &report, const CpuEvaluator &cpu,
                           llvm::ArrayRef<std::optional<HostBuffer>> expected,
                           const EvaluatorOptions &options, Fn steps) {
  if (target.family == TargetFamily::Rocm) {
    DeviceSteps<HipRuntime> device{report, target, cpu, expected, options};
    steps(device);
  } else {
    DeviceSteps<CudaRuntime> device{report, target, cpu, expected, options};
    steps(device);
  }
}

LogicalResult GpuEvaluator::runDeviceReference(Operation *anchor,
                                               std::string &why) {
  FailureOr<llvm::SmallString<128>> path = createReferenceFile(anchor);
  if (failed(path))
    return failure();
  llvm::scope_exit removeFile([&] { llvm::sys::fs::remove(*path); });
  // Plain loops on a GPU run at a few hundred GFLOP/s at least, but the
  // child also uploads the input sets: a limit that fits the work.
  double timeoutSeconds = options.timeoutSeconds;
  if (std::optional<uint64_t> flops = countFlops(anchor))
    timeoutSeconds = std::max(timeoutSeconds, 60 + 4.0 * double(*flops) / 1e10);
  ModuleOp kernel = cpu->getKernel().module.get();
  GpuKernelBuilder referenceBuilder =
      [](ModuleOp unscheduled,
         const TargetDescription &target) -> llvm::Expected<GpuKernelBinary> {
    FailureOr<GpuKernelBinary> binary =
        lowerReferenceKernelToGpuBinary(unscheduled, target);
    if (failed(binary))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the reference's GPU lowering failed");
    return std::move(*binary);
  };
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        DiagnosticCollector diagnostics(kernel->getContext());
        OwningOpRef<ModuleOp> copy = kernel.clone();
        runDeviceSteps(target, report, *cpu, {}, options, [&](auto &device) {
          device.runReference(*copy, referenceBuilder, diagnostics, *path);
        });
        return 0;
      },
      timeoutSeconds);
  referenceRecord = readCandidateReport(child, nullptr);
  if (!referenceRecord.isValid()) {
    why = (stringifyErrorClass(referenceRecord.error) + ": " +
               referenceRecord.message)
                  .str();
    return failure();
  }
  FailureOr<std::vector<std::optional<HostBuffer>>> outputs =
      readReferenceOutputs(anchor, *path, cpu->getKernel().arguments);
  if (failed(outputs)) {
    why = "its outputs could not be read";
    return failure();
  }
  ownedReferenceOutputs = std::move(*outputs);
  referenceOutputs = ownedReferenceOutputs;
  return success();
}

GpuEvaluator::~GpuEvaluator() {
  if (server)
    getServerPool().remove(*server);
}

/// The server's session of `Runtime`'s family. In the server's memory
/// only: each server is a child of its own, forked with none.
template <typename Runtime>
static typename DeviceSteps<Runtime>::Session &getServerSession() {
  static typename DeviceSteps<Runtime>::Session session;
  return session;
}

ServingChildPool &GpuEvaluator::getServerPool() {
  static ServingChildPool pool(4);
  return pool;
}

void GpuEvaluator::stopMeasuringServers() {
  for (ServingChild *child : getServerPool().getChildren())
    child->stop();
}

ServingChild *GpuEvaluator::getMeasuringServer() {
  if (!options.measuringServer)
    return nullptr;
  if (!server)
    server = std::make_unique<ServingChild>(
        [this](llvm::StringRef request, llvm::raw_ostream &report) {
          return serveMeasurement(request, report);
        },
        [this] {
          runDeviceSteps(target, llvm::nulls(), *cpu, referenceOutputs,
                         options, [&](auto &device) {
                           using Steps =
                               std::remove_reference_t<decltype(device)>;
                           device.openSession(getServerSession<
                                              typename Steps::RuntimeType>());
                         });
        });
  ServingChildPool &pool = getServerPool();
  pool.setCapacity(options.liveMeasuringServers);
  pool.use(*server);
  server->ensureStarted();
  return server.get();
}

bool GpuEvaluator::serveMeasurement(llvm::StringRef request,
                                    llvm::raw_ostream &report) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(request);
  const llvm::json::Object *o = parsed ? parsed->getAsObject() : nullptr;
  std::optional<llvm::StringRef> path = o ? o->getString("path") : std::nullopt;
  if (!path) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    writeCandidateReport(report, ErrorClass::Crash,
                         "the measuring server got a malformed request",
                         nullptr, 0);
    return false;
  }
  std::optional<double> best = o->getNumber("best");
  llvm::Expected<GpuKernelBinary> binary = readGpuKernelBinary(*path);
  if (!binary) {
    writeCandidateReport(report, ErrorClass::CompileError,
                         llvm::toString(binary.takeError()), nullptr, 0);
    return true;
  }
  bool goOn = true;
  runDeviceSteps(target, report, *cpu, referenceOutputs, options,
                 [&](auto &device) {
                   using Steps = std::remove_reference_t<decltype(device)>;
                   goOn = device.runInSession(
                       getServerSession<typename Steps::RuntimeType>(),
                       *binary, best);
                 });
  return goOn;
}

ChildResult GpuEvaluator::measureBuilt(llvm::StringRef path,
                                       std::optional<double> best) {
  if (!options.measuringServer)
    return runInChild(
        [&](llvm::raw_ostream &report) -> int {
          llvm::Expected<GpuKernelBinary> binary = readGpuKernelBinary(path);
          if (!binary) {
            writeCandidateReport(report, ErrorClass::CompileError,
                                 llvm::toString(binary.takeError()), nullptr,
                                 0);
            return 0;
          }
          runDeviceSteps(target, report, *cpu, referenceOutputs, options,
                         [&](auto &device) { device.run(*binary, best); });
          return 0;
        },
        options.timeoutSeconds);
  ServingChild *measuring = getMeasuringServer();
  std::string request;
  llvm::raw_string_ostream(request) << llvm::json::Value(llvm::json::Object{
      {"path", path},
      {"best", best ? llvm::json::Value(*best) : llvm::json::Value(nullptr)}});
  return measuring->call(request, options.timeoutSeconds);
}

CandidateRecord GpuEvaluator::evaluate(const Schedule &schedule,
                                       std::optional<double> bestSeconds) {
  CandidateRecord result;
  evaluateBatch(
      schedule, [&] { return bestSeconds; },
      [&](unsigned, CandidateRecord record) { result = std::move(record); });
  return result;
}

void GpuEvaluator::evaluateBatch(llvm::ArrayRef<Schedule> schedules,
                                 BestFn bestSeconds, RecordFn onRecord) {
  ModuleOp kernel = cpu->getKernel().module.get();
  unsigned count = schedules.size();
  // Scripts are written here (under crash recovery), binaries by the build
  // children into files of their own.
  std::vector<std::optional<std::string>> scripts;
  std::vector<llvm::SmallString<128>> paths(count);
  for (unsigned i = 0; i < count; ++i) {
    scripts.push_back(
        writeScriptCrashSafely(schedules[i], getKernelAnchor(), target));
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "ke-binary", "json", paths[i]))
      paths[i].clear();
  }
  llvm::scope_exit removeFiles([&] {
    for (const llvm::SmallString<128> &path : paths)
      if (!path.empty())
        llvm::sys::fs::remove(path);
  });
  unsigned jobs = options.jobs ? options.jobs : getDefaultBuildJobs();
  // Forked before the builds: the server opens the device while they run.
  getMeasuringServer();

  runBuildAndMeasure(
      count, jobs,
      [&](unsigned i) {
        return ChildJob{
            [&, i](llvm::raw_ostream &report) -> int {
              if (!scripts[i]) {
                CandidateRecord crashed = scriptCrashRecord(schedules[i]);
                writeCandidateReport(report, crashed.error, crashed.message,
                                     nullptr, 0);
                return 0;
              }
              if (paths[i].empty()) {
                writeCandidateReport(report, ErrorClass::CompileError,
                                     "cannot create a temporary file for "
                                     "the binary",
                                     nullptr, 0);
                return 0;
              }
              DiagnosticCollector diagnostics(kernel->getContext());
              OwningOpRef<ModuleOp> payload =
                  applyCandidateScript(report, kernel, *scripts[i], diagnostics);
              if (!payload)
                return 0;
              runDeviceSteps(target, report, *cpu, referenceOutputs, options,
                             [&](auto &device) {
                               std::optional<GpuKernelBinary> binary =
                                   device.lower(*payload, builder,
                                                diagnostics);
                               if (!binary)
                                 return;
                               if (llvm::Error error =
                                       writeGpuKernelBinary(paths[i], *binary))
                                 return device.fail(
                                     ErrorClass::CompileError,
                                     llvm::toString(std::move(error)));
                               writeCandidateReport(report, ErrorClass::None,
                                                    "", nullptr, 0);
                             });
              return 0;
            },
            options.timeoutSeconds};
      },
      [&](unsigned i, const ChildResult &built) -> std::optional<ChildResult> {
        if (!readCandidateReport(built, &schedules[i]).isValid())
          return std::nullopt;
        return measureBuilt(paths[i], bestSeconds());
      },
      [&](unsigned i, const ChildResult &built, const ChildResult *measured) {
        CandidateRecord record =
            readCandidateReport(measured ? *measured : built, &schedules[i]);
        if (scripts[i])
          record.script = std::move(*scripts[i]);
        onRecord(i, std::move(record));
      });
}
