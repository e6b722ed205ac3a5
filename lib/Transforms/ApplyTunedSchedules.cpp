//===- ApplyTunedSchedules.cpp - Schedule workloads from the database -----===//
//
// --ke-apply-tuned-schedules: every workload anchor on tensors is scheduled
// with the best record of its key in the tuning database (or the default
// schedule of its sketch rule), together with the ops `ke-opt tune` measured
// it with: the fills of its inits and its one elementwise consumer
// (ke/Workload/Kernel.h).
//
// Schedules were written for, and measured on, the kernel module: one
// function holding the group alone, its ops tagged ke.anchor / ke.producer /
// ke.consumer; the scripts match by those tags and vectorize the whole
// function. So each group is outlined into a private function of a scratch
// module shaped the same way (tensor arguments instead of buffers), the
// script runs with that module as its payload root, and the scheduled body
// is inlined back in place of the group. The schedule thus sees exactly what
// it saw when it was measured and touches nothing outside the group, and
// the result is one function again, so bufferization works in place across
// groups as it would on the unscheduled module (a kept call would return
// freshly allocated buffers).
//
// Map of the Transforms component (this pass is its only one):
//   getSchedulingRank, whyNotSchedulable   which anchors go first, which
//                                          groups cannot be scheduled
//   outlineGroup, runSchedule, inlineBack  a group to a scratch kernel
//                                          module, its script run, back
//   GroupScheduler::scheduleGroup          chooseSchedule (ke/TunedSchedules),
//                                          then the fallbacks and remarks
//   ApplyTunedSchedulesPass                options, the database, the walk
//
//===----------------------------------------------------------------------===//

#include "ke/Transforms/Passes.h"

#include "ke/Codegen/CpuModuleLowering.h"
#include "ke/Codegen/CpuPipeline.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Target/Target.h"
#include "ke/TunedSchedules/TunedSchedules.h"
#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/TransformOps/AffineTransformOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/TransformOps/BufferizationTransformOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/TransformOps/FuncTransformOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/TransformOps/MemRefTransformOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorInferTypeOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/TransformOps/TensorTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/LoopExtension/LoopExtension.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace ke {
#define GEN_PASS_DEF_APPLYTUNEDSCHEDULESPASS
#include "ke/Transforms/Passes.h.inc"
} // namespace ke

using namespace mlir;
using namespace ke;

namespace {

/// A kernel group outlined into the only function of a scratch module.
struct OutlinedGroup {
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// The clone of the anchor inside `func`.
  Operation *anchor = nullptr;
  /// The values outside the group that `func`'s arguments stand for.
  SmallVector<Value> arguments;
  /// The group's results that `func` returns, in order.
  SmallVector<Value> results;
};

/// Anchors whose group absorbs other workloads go first: a contraction's
/// group takes the fill of its accumulator and its elementwise consumer,
/// and an elementwise op's group the row reductions it reads, which are
/// workloads of their own too but were measured inside it. Those come last,
/// scheduled alone only where their group could not be.
int getSchedulingRank(Operation *anchor, KernelFusion fusion) {
  if (getFusingAnchor(anchor, fusion))
    return 3;
  switch (classifyWorkload(anchor)) {
  case WorkloadKind::Fill:
    return 2;
  case WorkloadKind::Elementwise:
  case WorkloadKind::DataMovement:
    return 1;
  default:
    return 0;
  }
}

/// Why `group` cannot be scheduled, or an empty string. Schedules were
/// measured on tensors of static shapes.
std::string whyNotSchedulable(ArrayRef<Operation *> group) {
  for (Operation *op : group) {
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
      if (isa<MemRefType>(type))
        return "is on buffers (schedules apply to linalg on tensors)";
      if (auto shaped = dyn_cast<ShapedType>(type);
          shaped && !shaped.hasStaticShape())
        return "has dynamic shapes";
    }
  }
  return "";
}

/// Outlines `group` (getKernelGroup of `anchor`) into a private function of
/// a new module, tagged as buildKernelModule tags the kernel. Scalar
/// constants travel with the group, as they do into kernels; every other
/// value from outside becomes an argument.
OutlinedGroup outlineGroup(ArrayRef<Operation *> group, Operation *anchor) {
  llvm::SmallPtrSet<Operation *, 4> inGroup(group.begin(), group.end());
  llvm::SetVector<Value> external;
  for (Operation *op : group) {
    for (Value operand : op->getOperands())
      if (!inGroup.contains(operand.getDefiningOp()))
        external.insert(operand);
    getUsedValuesDefinedAbove(op->getRegions(), external);
  }
  OutlinedGroup outlined;
  SmallVector<Value> constants;
  for (Value value : external) {
    if (inGroup.contains(value.getDefiningOp()))
      continue;
    if (!isa<ShapedType>(value.getType()) && matchPattern(value, m_Constant()))
      constants.push_back(value);
    else
      outlined.arguments.push_back(value);
  }
  // The results of the kernel: those no op of the group uses.
  for (Operation *op : group)
    for (OpResult result : op->getResults())
      if (llvm::none_of(result.getUsers(), [&](Operation *user) {
            return inGroup.contains(user);
          }))
        outlined.results.push_back(result);

  MLIRContext *context = anchor->getContext();
  Location loc = anchor->getLoc();
  OpBuilder builder(context);
  outlined.module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(outlined.module->getBody());
  auto argumentTypes = llvm::map_to_vector(
      outlined.arguments, [](Value value) { return value.getType(); });
  auto resultTypes = llvm::map_to_vector(
      outlined.results, [](Value value) { return value.getType(); });
  outlined.func =
      func::FuncOp::create(builder, loc, "ke_group",
                           builder.getFunctionType(argumentTypes, resultTypes));
  outlined.func.setPrivate();
  Block *body = outlined.func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(outlined.arguments, body->getArguments());
  for (Value value : constants)
    mapping.map(value, builder.clone(*value.getDefiningOp())->getResult(0));
  for (Operation *op : group) {
    Operation *clone = builder.clone(*op, mapping);
    for (StringRef tag : {kAnchorAttr, kProducerAttr, kConsumerAttr})
      clone->removeAttr(tag);
    clone->setAttr(op == anchor              ? kAnchorAttr
                   : isa<linalg::FillOp>(op) ? kProducerAttr
                                             : kConsumerAttr,
                   builder.getUnitAttr());
    if (op == anchor)
      outlined.anchor = clone;
  }
  SmallVector<Value> returned = llvm::map_to_vector(
      outlined.results, [&](Value value) { return mapping.lookup(value); });
  func::ReturnOp::create(builder, loc, returned);
  return outlined;
}

/// Runs `schedule`'s script on the outlined group and tags its thread
/// loops. On failure, `messages` holds the errors it produced; they are not
/// reported, the caller decides whether the failure is an error.
LogicalResult runSchedule(OutlinedGroup &outlined, const Schedule &schedule,
                          const TargetDescription &target, std::string &script,
                          std::string &messages) {
  MLIRContext *context = outlined.func->getContext();
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler collect(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        if (!messages.empty())
          messages += "; ";
        messages += diag.str();
      }
      return success();
    });
    script = schedule.getScript(outlined.anchor, target);
    OwningOpRef<ModuleOp> parsed = parseScript(script, context);
    result = parsed ? applySchedule(*outlined.module, *parsed) : failure();
  }
  if (failed(result)) {
    if (messages.empty())
      messages = "the script did not apply";
    return failure();
  }
  // The lowering gives these loops the schedule's OpenMP threads (see
  // ke/Codegen/CpuModuleLowering.h); without the knob they run sequentially,
  // as in the measured kernel.
  int64_t threads = schedule.getAssignment().get("threads", 0);
  if (threads > 0)
    outlined.func.walk([&](scf::ForallOp forall) {
      forall->setAttr(kNumThreadsAttr,
                      IntegerAttr::get(IntegerType::get(context, 64), threads));
    });
  return success();
}

/// Replaces `group` by the scheduled body of `outlined`, inserted before
/// `anchor`: every value the group reads dominates the anchor (its fills
/// do, and getKernelGroup keeps only consumers whose other operands do).
/// Ops of the group that something outside still uses (a fill shared with
/// another op) stay; the others are erased and added to `erased`.
void inlineBack(OutlinedGroup &outlined, ArrayRef<Operation *> group,
                Operation *anchor, llvm::DenseSet<Operation *> &erased) {
  OpBuilder builder(anchor);
  IRMapping mapping;
  Block &body = outlined.func.getBody().front();
  mapping.map(body.getArguments(), outlined.arguments);
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    // The tags were for the script; nothing after it should match them.
    clone->walk([](Operation *nested) {
      for (StringRef tag : {kAnchorAttr, kProducerAttr, kConsumerAttr})
        nested->removeAttr(tag);
    });
  }
  auto returned = cast<func::ReturnOp>(body.getTerminator());
  for (auto [original, scheduled] :
       llvm::zip_equal(outlined.results, returned.getOperands()))
    original.replaceAllUsesWith(mapping.lookup(scheduled));
  for (Operation *op : llvm::reverse(group)) {
    if (!op->use_empty())
      continue;
    erased.insert(op);
    op->erase();
  }
}

/// Chooses and applies the schedule of each group, for one run of the pass.
class GroupScheduler {
public:
  GroupScheduler(const TargetDescription &target, TuningDatabase *database,
                 StringRef databasePath)
      : target(target), database(database), databasePath(databasePath) {}

  /// Schedules the group of `anchor`, adding the ops it erases to
  /// `erased`. Failure only after an error.
  LogicalResult scheduleGroup(Operation *anchor,
                              llvm::DenseSet<Operation *> &erased);

private:
  const TargetDescription &target;
  TuningDatabase *database;
  StringRef databasePath;
};

struct ApplyTunedSchedulesPass final
    : ke::impl::ApplyTunedSchedulesPassBase<ApplyTunedSchedulesPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override;
  void runOnOperation() override;
};

void ApplyTunedSchedulesPass::getDependentDialects(
    DialectRegistry &registry) const {
  // What transform scripts are written in and produce, and the interfaces
  // tiling and fusion need, so the pass works in any host (upstream
  // mlir-opt registers these too; repeats are ignored).
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect,
                  transform::TransformDialect, vector::VectorDialect>();
  affine::registerTransformDialectExtension(registry);
  bufferization::registerTransformDialectExtension(registry);
  func::registerTransformDialectExtension(registry);
  linalg::registerTransformDialectExtension(registry);
  memref::registerTransformDialectExtension(registry);
  scf::registerTransformDialectExtension(registry);
  tensor::registerTransformDialectExtension(registry);
  transform::registerLoopExtension(registry);
  vector::registerTransformDialectExtension(registry);
  linalg::registerAllDialectInterfaceImplementations(registry);
  tensor::registerInferTypeOpInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
}

LogicalResult
GroupScheduler::scheduleGroup(Operation *anchor,
                              llvm::DenseSet<Operation *> &erased) {
  SmallVector<Operation *> group =
      getKernelGroup(anchor, getKernelFusion(target));
  std::string key = computeWorkloadKey(anchor);
  if (std::string why = whyNotSchedulable(group); !why.empty()) {
    emitRemark(anchor->getLoc(), "ke: workload ")
        << key << " " << why << "; left to the default lowering";
    return success();
  }
  OutlinedGroup outlined = outlineGroup(group, anchor);
  llvm::Expected<std::optional<ChosenSchedule>> chosen = ke::chooseSchedule(
      database, databasePath, outlined.anchor, key, target);
  if (!chosen) {
    emitError(anchor->getLoc(), "ke: ") << llvm::toString(chosen.takeError());
    return failure();
  }
  if (!*chosen)
    return success(); // no rule applies: the default lowering, remarked
  std::string script, messages;
  std::string remark = (*chosen)->getRemark(databasePath);
  if (failed(runSchedule(outlined, (*chosen)->schedule, target, script,
                         messages))) {
    if (!(*chosen)->isTuned()) {
      emitError(anchor->getLoc(), "ke: the default schedule ")
          << (*chosen)->schedule.describe()
          << " failed to apply (a bug in ke): " << messages;
      return failure();
    }
    // A record that was valid when it was measured but no longer applies
    // (MLIR or the rule changed under it): fall back to the default, on a
    // fresh copy of the group.
    outlined = outlineGroup(group, anchor);
    FailureOr<Schedule> fallback = getDefaultSchedule(outlined.anchor, target);
    if (failed(fallback))
      return success();
    remark = "ke: the tuned schedule " + (*chosen)->schedule.describe() +
             " failed to apply (" + messages +
             "); applied the default schedule " + fallback->describe();
    messages.clear();
    if (failed(runSchedule(outlined, *fallback, target, script, messages))) {
      emitError(anchor->getLoc(), "ke: the default schedule ")
          << fallback->describe()
          << " failed to apply (a bug in ke): " << messages;
      return failure();
    }
  } else if ((*chosen)->isTuned() && !(*chosen)->record->script.empty() &&
             script != (*chosen)->record->script) {
    remark += "; note: the rule now writes another script for these knobs "
              "than the one measured";
  }
  emitRemark(anchor->getLoc(), remark);
  inlineBack(outlined, group, anchor, erased);
  return success();
}

void ApplyTunedSchedulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::Expected<TargetDescription> parsed = parseTarget(target);
  if (!parsed) {
    emitError(module.getLoc(), "ke: ") << llvm::toString(parsed.takeError());
    return signalPassFailure();
  }
  if (!parsed->isCpu()) {
    emitError(module.getLoc(), "ke: target '")
        << parsed->name
        << "': this pass applies schedules for cpu targets only; GPU "
           "kernels are compiled with their schedules by `ke-opt compile "
           "--target "
        << parsed->name << "`";
    return signalPassFailure();
  }
  // A typo in the path must not silently mean "no records".
  llvm::Expected<std::unique_ptr<TuningDatabase>> database =
      openScheduleDatabase(db);
  if (!database) {
    emitError(module.getLoc(), "ke: ") << llvm::toString(database.takeError());
    return signalPassFailure();
  }

  SmallVector<Operation *> anchors;
  module.walk([&](Operation *op) {
    if (isWorkloadAnchor(op))
      anchors.push_back(op);
  });
  KernelFusion fusion = getKernelFusion(*parsed);
  llvm::stable_sort(anchors, [&](Operation *a, Operation *b) {
    return getSchedulingRank(a, fusion) < getSchedulingRank(b, fusion);
  });
  // Scheduling a group erases its ops; later anchors among them are
  // skipped. A new op may reuse an erased op's address, but only original
  // anchors are looked up, and the erased ones stay in `erased`.
  GroupScheduler scheduler(*parsed, database->get(), db);
  llvm::DenseSet<Operation *> erased;
  bool failedAny = false;
  for (Operation *anchor : anchors)
    if (!erased.contains(anchor) &&
        failed(scheduler.scheduleGroup(anchor, erased)))
      failedAny = true;
  if (failedAny)
    signalPassFailure();
}

} // namespace
