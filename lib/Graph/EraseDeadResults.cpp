//===- EraseDeadResults.cpp - Unused results of generics dropped ----------===//
//
// ke-erase-dead-results (ke/Graph/Passes.td). torch-mlir's max reduction
// also computes an i64 index that nothing reads. A two-result reduction is
// no row reduction to ke's kernel grouping (getRowReductions wants one
// result), and the index doubles its registers; canonicalization keeps it
// because the index's init is read by the body. MLIR's
// erase-unused-operands-and-results patterns cut such unused cycles first.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "ke-erase-dead-results"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_ERASEDEADRESULTSPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

struct EraseDeadResultsPass
    : ke::impl::EraseDeadResultsPassBase<EraseDeadResultsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace
