//===- CostModel.cpp - Nearest-neighbour fallback and model selection -----===//
//
// When XGBoost cannot be loaded the explorer still needs a model that ranks
// candidates by what was measured: k-nearest-neighbour regression on
// standardized features, with no dependency and no training cost beyond
// computing column statistics.
//
//===----------------------------------------------------------------------===//

#include "ke/Search/CostModel.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <mutex>

using namespace ke;

CostModel::~CostModel() = default;

namespace {

class NearestNeighbourCostModel final : public CostModel {
public:
  llvm::StringRef getName() const override { return "nearest-neighbour"; }

  void train(llvm::ArrayRef<std::vector<float>> features,
             llvm::ArrayRef<float> scores) override {
    columns.clear();
    rows.clear();
    labels.assign(scores.begin(), scores.end());
    size_t n = std::min(features.size(), scores.size());
    labels.resize(n);
    if (n == 0)
      return;
    // Mean and standard deviation of each column over its known values;
    // constant columns say nothing about the distance and are dropped.
    size_t width = features.front().size();
    for (size_t c = 0; c < width; ++c) {
      double sum = 0, sumSquares = 0;
      size_t count = 0;
      for (size_t r = 0; r < n; ++r) {
        float x = c < features[r].size() ? features[r][c] : NAN;
        if (std::isnan(x))
          continue;
        sum += x;
        sumSquares += double(x) * x;
        ++count;
      }
      if (count == 0)
        continue;
      double mean = sum / count;
      double variance = std::max(0.0, sumSquares / count - mean * mean);
      if (variance > 1e-12)
        columns.push_back({c, float(mean), float(1 / std::sqrt(variance))});
    }
    rows.reserve(n * columns.size());
    for (size_t r = 0; r < n; ++r)
      appendStandardized(features[r], rows);
  }

  std::vector<float>
  predict(llvm::ArrayRef<std::vector<float>> features) override {
    std::vector<float> predictions(features.size(), 0.0f);
    size_t n = labels.size();
    if (n == 0)
      return predictions;
    size_t width = columns.size();
    size_t k = std::min<size_t>(kNeighbours, n);
    std::vector<float> query;
    std::vector<std::pair<float, size_t>> nearest;
    for (size_t q = 0; q < features.size(); ++q) {
      query.clear();
      appendStandardized(features[q], query);
      // The k smallest distances, ties broken by row order (deterministic).
      nearest.clear();
      for (size_t r = 0; r < n; ++r) {
        const float *row = rows.data() + r * width;
        float distance = 0;
        for (size_t c = 0; c < width; ++c) {
          float delta = row[c] - query[c];
          distance += delta * delta;
        }
        if (nearest.size() < k || distance < nearest.back().first) {
          auto at = std::upper_bound(nearest.begin(), nearest.end(),
                                     std::make_pair(distance, r));
          nearest.insert(at, {distance, r});
          if (nearest.size() > k)
            nearest.pop_back();
        }
      }
      // Inverse-distance weights: a measured twin dominates.
      double weighted = 0, total = 0;
      for (auto [distance, r] : nearest) {
        double weight = 1 / (double(distance) + 1e-6);
        weighted += weight * labels[r];
        total += weight;
      }
      predictions[q] = float(weighted / total);
    }
    return predictions;
  }

private:
  static constexpr size_t kNeighbours = 8;

  struct Column {
    size_t index;
    float mean, inverseStd;
  };

  /// Standardized kept columns of `row`; missing values become the mean.
  void appendStandardized(const std::vector<float> &row,
                          std::vector<float> &out) const {
    for (const Column &column : columns) {
      float x = column.index < row.size() ? row[column.index] : NAN;
      out.push_back(std::isnan(x) ? 0.0f
                                  : (x - column.mean) * column.inverseStd);
    }
  }

  std::vector<Column> columns;
  /// Training rows, standardized, row-major over `columns`.
  std::vector<float> rows;
  std::vector<float> labels;
};

} // namespace

std::unique_ptr<CostModel> ke::createNearestNeighbourCostModel() {
  return std::make_unique<NearestNeighbourCostModel>();
}

std::unique_ptr<CostModel> ke::createDefaultCostModel(uint64_t seed) {
  llvm::Expected<std::unique_ptr<CostModel>> model =
      createXGBoostCostModel(seed);
  if (model)
    return std::move(*model);
  std::string reason = llvm::toString(model.takeError());
  static std::once_flag warned;
  std::call_once(warned, [&] {
    llvm::errs() << "ke: warning: " << reason
                 << "; ranking candidates with the nearest-neighbour model "
                    "instead\n";
  });
  return createNearestNeighbourCostModel();
}

namespace {

class TransferCostModel final : public CostModel {
public:
  TransferCostModel(std::unique_ptr<CostModel> inner,
                    std::vector<std::vector<float>> priorFeatures,
                    std::vector<float> priorScores)
      : inner(std::move(inner)), priorFeatures(std::move(priorFeatures)),
        priorScores(std::move(priorScores)) {}

  llvm::StringRef getName() const override { return inner->getName(); }
  void train(llvm::ArrayRef<std::vector<float>> features,
             llvm::ArrayRef<float> scores) override {
    std::vector<std::vector<float>> rows = priorFeatures;
    rows.insert(rows.end(), features.begin(), features.end());
    std::vector<float> all = priorScores;
    all.insert(all.end(), scores.begin(), scores.end());
    inner->train(rows, all);
  }
  std::vector<float>
  predict(llvm::ArrayRef<std::vector<float>> features) override {
    return inner->predict(features);
  }

private:
  std::unique_ptr<CostModel> inner;
  std::vector<std::vector<float>> priorFeatures;
  std::vector<float> priorScores;
};

} // namespace

std::unique_ptr<CostModel>
ke::createTransferCostModel(std::unique_ptr<CostModel> inner,
                            std::vector<std::vector<float>> priorFeatures,
                            std::vector<float> priorScores) {
  return std::make_unique<TransferCostModel>(
      std::move(inner), std::move(priorFeatures), std::move(priorScores));
}
