//===- CostModel.h - Models that rank unmeasured candidates -----*- C++ -*-===//
//-*-===//
//
// The explorer measures a few candidates per round and ranks thousands of
// others with a model trained on the measured ones (Ansor's online cost
// model). Rows are feature vectors (ke/Search/Features.h); scores are
// normalized throughputs, higher is better. docs/cost-model.md describes the
// models and their parameters.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_COSTMODEL_H
#define KE_SEARCH_COSTMODEL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ke {

/// A regression model from candidate features to scores.
class CostModel {
public:
  virtual ~CostModel();

  /// "xgboost" or "nearest-neighbour".
  virtual llvm::StringRef getName() const = 0;

  /// Replaces the training set with all samples so far and retrains. Scores:
  /// higher is better (the explorer passes best_time/time in (0,1]).
  virtual void train(llvm::ArrayRef<std::vector<float>> features,
                     llvm::ArrayRef<float> scores) = 0;

  /// Predicted scores for `features`, higher is better. Before any training
  /// every prediction is 0.
  virtual std::vector<float>
  predict(llvm::ArrayRef<std::vector<float>> features) = 0;
};

/// Gradient-boosted trees from XGBoost, whose library (libxgboost.so.0, or
/// $KE_XGBOOST_LIBRARY) is loaded with dlopen on first use, so ke-opt does
/// not depend on it. Deterministic for a seed; single-threaded, so that it
/// does not compete with measured candidates for cores. Fails with a message
/// when the library cannot be loaded.
llvm::Expected<std::unique_ptr<CostModel>>
createXGBoostCostModel(uint64_t seed);

/// A dependency-free fallback used when XGBoost cannot be loaded:
/// k-nearest-neighbour regression on standardized features.
std::unique_ptr<CostModel> createNearestNeighbourCostModel();

/// XGBoost when it loads, else the nearest-neighbour model after a one-time
/// warning on stderr that says why.
std::unique_ptr<CostModel> createDefaultCostModel(uint64_t seed);

/// `inner` warm-started (docs/cost-model.md, Transfer): every training adds
/// `priorFeatures` with `priorScores` (other workloads' measured candidates
/// on the same target, each scored against its own workload's best) to the
/// workload's own samples, as Ansor's and MetaSchedule's pre-trained models
/// carry what other tasks taught them.
std::unique_ptr<CostModel>
createTransferCostModel(std::unique_ptr<CostModel> inner,
                        std::vector<std::vector<float>> priorFeatures,
                        std::vector<float> priorScores);

} // namespace ke

#endif // KE_SEARCH_COSTMODEL_H
