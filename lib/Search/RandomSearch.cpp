//===- RandomSearch.cpp - Tuning by random sampling -----------------------===//

#include "ke/Search/RandomSearch.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <chrono>

using namespace mlir;
using namespace ke;

namespace {

/// A live progress line on stderr: redrawn in place on a terminal, printed
/// every tenth of the trials otherwise (logs stay readable).
class ProgressLine {
public:
  ProgressLine(bool enabled, unsigned index, unsigned total,
               const Workload &workload, unsigned trials)
      : enabled(enabled), index(index), total(total), workload(workload),
        trials(trials), start(std::chrono::steady_clock::now()),
        terminal(llvm::sys::Process::StandardErrIsDisplayed()) {}

  void update(unsigned done, std::optional<double> bestSeconds) {
    if (!enabled)
      return;
    bool last = done == trials;
    if (!terminal && !last && done % std::max(1u, trials / 10) != 0)
      return;
    double elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    double eta = done ? elapsed / done * (trials - done) : 0;
    std::string best = "-";
    if (bestSeconds && workload.flops)
      best = llvm::formatv("{0:F2} GFLOP/s", *workload.flops / *bestSeconds / 1e9);
    else if (bestSeconds)
      best = llvm::formatv("{0:F3} ms", *bestSeconds * 1e3);
    llvm::errs() << (terminal ? "\r\x1b[K" : "")
                 << llvm::formatv("[ke] workload {0}/{1} {2}: trial {3}/{4}, "
                                  "best {5}, ETA {6:F0} s",
                                  index + 1, total, workload.opName, done,
                                  trials, best, eta)
                 << (terminal && !last ? "" : "\n");
  }

private:
  bool enabled;
  unsigned index, total;
  const Workload &workload;
  unsigned trials;
  std::chrono::steady_clock::time_point start;
  bool terminal;
};

uint64_t seedFor(llvm::StringRef key, uint64_t seed) {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(key));
  uint64_t mixed = seed;
  for (int i = 0; i < 8; ++i)
    mixed = mixed * 131 + digest[i];
  return mixed;
}

} // namespace

llvm::json::Value TuningResult::toJSON() const {
  llvm::json::Object o{{"key", key}, {"op", opName}, {"count", count}};
  if (flops)
    o["flops"] = *flops;
  if (!skipped.empty()) {
    o["skipped"] = skipped;
    return o;
  }
  auto seconds = [](const std::optional<CandidateRecord> &r) {
    return r && r->isValid() ? llvm::json::Value(r->measurement.median)
                             : llvm::json::Value(nullptr);
  };
  o["reference_seconds"] = seconds(reference);
  o["untuned_seconds"] = seconds(untuned);
  o["best_seconds"] = seconds(best);
  if (best && untuned && untuned->isValid())
    o["speedup_over_untuned"] =
        untuned->measurement.median / best->measurement.median;
  if (best && flops)
    o["best_gflops"] = *flops / best->measurement.median / 1e9;
  if (best)
    o["best_schedule"] = best->schedule->toJSON();
  o["trials"] = trials;
  o["valid"] = valid;
  o["rejected_by_limits"] = rejectedByLimits;
  llvm::json::Object counts;
  for (unsigned i = 1; i < kNumErrorClasses; ++i)
    counts[stringifyErrorClass(ErrorClass(i))] = errors[i];
  o["errors"] = std::move(counts);
  return o;
}

TuningResult ke::tuneWithRandomSearch(const Workload &workload,
                                      const TargetDescription &target,
                                      const TuneOptions &options,
                                      unsigned index, unsigned total) {
  TuningResult result;
  result.key = workload.key;
  result.opName = workload.opName;
  result.flops = workload.flops;
  result.count = workload.count();

  // Diagnostics while preparing become the reason the workload is skipped.
  std::string reason;
  {
    ScopedDiagnosticHandler handler(
        workload.firstOp->getContext(), [&](Diagnostic &diag) {
          if (reason.empty())
            reason = diag.str();
          return success();
        });
    EvaluatorOptions evaluatorOptions = options.evaluator;
    evaluatorOptions.seed = seedFor(workload.key, options.seed);
    FailureOr<std::unique_ptr<CpuEvaluator>> created =
        CpuEvaluator::create(workload.firstOp, target, evaluatorOptions);
    if (failed(created)) {
      result.skipped = reason.empty() ? "cannot be evaluated" : reason;
      return result;
    }
    std::unique_ptr<CpuEvaluator> evaluator = std::move(*created);
    Operation *anchor = evaluator->getKernelAnchor();
    SmallVector<Schedule> sketches = getCandidateSketches(anchor, target);
    if (sketches.empty()) {
      result.skipped = "no sketch rule applies";
      return result;
    }
    const Schedule &base = sketches.front(); // the untuned default

    auto record = [&](const CandidateRecord &candidate, llvm::StringRef role) {
      if (!options.records)
        return;
      llvm::json::Value json = candidate.toJSON();
      json.getAsObject()->insert({"workload", workload.key});
      json.getAsObject()->insert({"role", role});
      json.getAsObject()->insert({"target", target.name});
      *options.records << json << '\n';
      options.records->flush();
    };
    auto consider = [&](const CandidateRecord &candidate) {
      if (candidate.isValid() &&
          (!result.best ||
           candidate.measurement.median < result.best->measurement.median))
        result.best = candidate;
    };

    result.reference = evaluator->evaluateReference();
    record(*result.reference, "reference");
    result.untuned = evaluator->evaluate(base);
    record(*result.untuned, "untuned");
    consider(*result.untuned);

    ProgressLine progress(options.showProgress, index, total, workload,
                          options.trials);
    Sampler sampler(seedFor(workload.key, options.seed) + 1);
    for (unsigned trial = 0; trial < options.trials; ++trial) {
      std::optional<Schedule> candidate =
          sampler.sampleAny(sketches, anchor, target);
      if (!candidate)
        break; // the limits rule out (nearly) everything
      CandidateRecord outcome = evaluator->evaluate(
          *candidate, result.best ? std::optional<double>(
                                       result.best->measurement.median)
                                 : std::nullopt);
      record(outcome, "trial");
      ++result.trials;
      if (outcome.isValid())
        ++result.valid;
      ++result.errors[unsigned(outcome.error)];
      consider(outcome);
      progress.update(trial + 1, result.best
                                     ? std::optional<double>(
                                           result.best->measurement.median)
                                     : std::nullopt);
    }
    result.rejectedByLimits = sampler.getRejected();
  }
  return result;
}
