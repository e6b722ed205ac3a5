//===- GpuRowKernel.cpp - Rules whose row kernels a pass builds -----------===//

#include "GpuRowKernel.h"
#include "GpuSupport.h"
#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace ke;

namespace {

/// The most threads of a row, and the most vectors per thread the default
/// thread count leaves.
constexpr int64_t kMaxRowThreads = 1024, kDefaultSteps = 8;
/// The default threads per block.
constexpr int64_t kDefaultBlockThreads = 256;

SmallVector<int64_t> vectorChoices(const RowKernelShape &s) {
  SmallVector<int64_t> choices;
  for (int64_t v = 1; v * s.elementBits <= 128; v *= 2)
    if (s.cols % v == 0)
      choices.push_back(v);
  return choices;
}

} // namespace

KnobSpace ke::getRowKernelKnobs(const RowKernelShape &s,
                                const TargetDescription &target) {
  Knob vec{"vec", vectorChoices(s), 0};
  vec.defaultIndex = vec.choices.size() - 1;
  Knob rowThreads{"row_threads", {}, 0};
  for (int64_t t = 1; t <= kMaxRowThreads; t *= 2) {
    rowThreads.choices.push_back(t);
    if (t >= s.cols)
      break;
  }
  int64_t v = vec.choices.back();
  while (rowThreads.defaultIndex + 1 < rowThreads.choices.size() &&
         llvm::divideCeil(s.cols,
                          rowThreads.choices[rowThreads.defaultIndex] * v) >
             kDefaultSteps)
    ++rowThreads.defaultIndex;
  Knob rows{"rows", {}, 0};
  for (int64_t r = 1; r <= target.gpu.maxThreadsPerBlock; r *= 2)
    rows.choices.push_back(r);
  int64_t t = rowThreads.choices[rowThreads.defaultIndex];
  rows.defaultIndex = nearestChoice(
      rows.choices, std::max<int64_t>(1, kDefaultBlockThreads / t));
  KnobSpace space;
  space.knobs = {rowThreads, rows, vec};
  return space;
}

LogicalResult ke::checkRowKernelLimits(const RowKernelShape &s,
                                       const TargetDescription &target,
                                       const KnobAssignment &knobs,
                                       std::string &reason) {
  int64_t rowsPerBlock = knobs.get("rows", 1);
  int64_t threads = knobs.get("row_threads", 1) * rowsPerBlock;
  if (threads % target.gpu.warpSize != 0) {
    reason = "a block must be whole warps";
    return failure();
  }
  if (llvm::divideCeil(s.rows, rowsPerBlock) >
      std::numeric_limits<int32_t>::max()) {
    reason = "too many blocks for the grid";
    return failure();
  }
  if (!llvm::is_contained(vectorChoices(s), knobs.get("vec", 1))) {
    reason = "vec must divide the row in at most 128 bits";
    return failure();
  }
  return checkBlockLimits(target, {threads, 1, 1}, 40, reason);
}

std::string ke::emitRowKernelScript(StringRef rule, StringRef opName,
                                    StringRef mark, StringRef builder,
                                    bool markBefore,
                                    const TargetDescription &target,
                                    const KnobAssignment &knobs) {
  ScriptWriter w;
  w.comment(("sketch " + rule + ": " + knobs.str()).str());
  std::string knobParam = w.fresh("knobs");
  w.line(llvm::formatv("{0} = transform.param.constant {{row_threads = {1} : "
                       "i64, rows = {2} : i64, vec = {3} : i64, warp = {4} : "
                       "i64} -> !transform.any_param",
                       knobParam, knobs.get("row_threads", 1),
                       knobs.get("rows", 1), knobs.get("vec", 1),
                       int64_t(target.gpu.warpSize)));
  auto annotate = [&](const std::string &op) {
    w.comment((builder + " builds the kernel from the mark").str());
    w.line("transform.annotate " + op + " \"" + mark.str() + "\" = " +
           knobParam + " : !transform.any_op, !transform.any_param");
  };
  if (markBefore)
    annotate(w.match(opName, kAnchorAttr));
  std::string func = w.fresh("func");
  w.line(func + " = transform.structured.match ops{[\"func.func\"]} in "
                "%root : (!transform.any_op) -> !transform.any_op");
  std::string bufferized = w.fresh("func");
  w.line(bufferized + " = transform.bufferization.one_shot_bufferize " +
         func + " : (!transform.any_op) -> !transform.any_op");
  if (!markBefore) {
    // Bufferization rebuilt the op without its attributes.
    std::string op = w.fresh("op");
    w.line(op + " = transform.structured.match ops{[\"" + opName.str() +
           "\"]} in " + bufferized +
           " : (!transform.any_op) -> !transform.any_op");
    annotate(op);
  }
  return w.finish();
}

LoopNestDescription ke::describeRowKernel(ArrayRef<int64_t> ranges,
                                          const KnobAssignment &knobs) {
  unsigned rank = ranges.size();
  int64_t rowThreads = knobs.get("row_threads", 1);
  int64_t vec = knobs.get("vec", 1);
  LoopNestDescription d;
  d.ranges.assign(ranges.begin(), ranges.end());
  d.reduction.assign(rank, false);
  d.reduction.back() = true;
  SmallVector<int64_t> block(rank, 1), thread(rank, 0), inner(rank, 0);
  block.back() = 0;
  thread.back() = llvm::divideCeil(ranges.back(), rowThreads);
  inner.back() = vec;
  d.addLevel(TileLevelRole::Threads, block, /*parallel=*/true);
  d.addLevel(TileLevelRole::Register, thread, /*parallel=*/true);
  d.addLevel(TileLevelRole::Inner, inner, /*parallel=*/false);
  d.threads = rowThreads * knobs.get("rows", 1);
  d.vectorLoop = rank - 1;
  d.vectorWidth = vec;
  return d;
}
