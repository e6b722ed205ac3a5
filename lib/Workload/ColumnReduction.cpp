//===- ColumnReduction.cpp - Reductions along a non-innermost loop --------===//

#include "ke/Workload/ColumnReduction.h"
#include "ke/Workload/Kernel.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace ke;

std::optional<ColumnReduction>
ke::analyzeColumnReduction(linalg::LinalgOp op) {
  if (!op || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      op.getNumLoops() < 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::parallel)
    return std::nullopt;
  ColumnReduction c;
  c.reductionLoop =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  c.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(c.ranges,
                   [](int64_t r) { return ShapedType::isDynamic(r) || r < 1; }))
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return std::nullopt;
  c.combiner = getReductionCombiner(op);
  if (!c.combiner)
    return std::nullopt;
  for (auto [loop, range] : llvm::enumerate(c.ranges)) {
    if (loop < c.reductionLoop)
      c.batch *= range;
    else if (loop == c.reductionLoop)
      c.rows = range;
    else
      c.columns *= range;
  }
  return c;
}
