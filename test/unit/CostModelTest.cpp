//===- CostModelTest.cpp - XGBoost and nearest-neighbour cost models ------===//

#include "ke/Search/CostModel.h"

#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

using namespace ke;

namespace {

/// Rows built from three hidden knobs the way real features are (several
/// transformed copies, a constant column, missing values), with a score in
/// (0, 1] that peaks at one knob setting.
struct Synthetic {
  std::vector<std::vector<float>> features;
  std::vector<float> scores;

  Synthetic(unsigned rows, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(0, 1);
    for (unsigned i = 0; i < rows; ++i) {
      float u0 = uniform(rng), u1 = uniform(rng), u2 = uniform(rng);
      float noise = uniform(rng);
      features.push_back({u0, u1, u2, u0 + u1, u0 * u2, std::log1p(u1), 5.0f,
                          NAN, i % 2 ? NAN : u2, noise});
      float d = (u0 - 0.4f) * (u0 - 0.4f) + (u1 - 0.7f) * (u1 - 0.7f);
      scores.push_back(0.05f + 0.95f * std::exp(-3 * d) * (0.6f + 0.4f * u2));
    }
  }
};

/// Ranks with ties averaged.
std::vector<double> ranks(const std::vector<float> &values) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    for (size_t k = i; k <= j; ++k)
      rank[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return rank;
}

double spearman(const std::vector<float> &a, const std::vector<float> &b) {
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = ra.size(), ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
};

/// Threads of this process (the evaluator forks, so models must not start
/// any).
unsigned countThreads() {
  unsigned threads = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it("/proc/self/task", ec), end;
       !ec && it != end; it.increment(ec))
    ++threads;
  return threads;
}

std::unique_ptr<CostModel> makeXGBoost(uint64_t seed) {
  llvm::Expected<std::unique_ptr<CostModel>> model =
      createXGBoostCostModel(seed);
  if (!model) {
    ADD_FAILURE() << "XGBoost does not load (scripts/setup.sh installs "
                     "libxgboost-dev): "
                  << llvm::toString(model.takeError());
    return nullptr;
  }
  return std::move(*model);
}

/// Trains on 1000 rows and checks the ranking of 500 others.
void expectLearnsRanking(CostModel &model) {
  Synthetic train(1000, 1), test(500, 2);
  model.train(train.features, train.scores);
  std::vector<float> predicted = model.predict(test.features);
  ASSERT_EQ(predicted.size(), test.scores.size());
  double rho = spearman(predicted, test.scores);
  EXPECT_GT(rho, 0.8) << model.getName().str();
  std::printf("%s: Spearman %.3f on held-out rows\n",
              model.getName().str().c_str(), rho);
}

TEST(CostModelTest, XGBoostPredictsZeroBeforeTraining) {
  std::unique_ptr<CostModel> model = makeXGBoost(1);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->getName(), "xgboost");
  Synthetic data(10, 3);
  EXPECT_EQ(model->predict(data.features), std::vector<float>(10, 0.0f));
  // Training on nothing leaves it untrained.
  model->train({}, {});
  EXPECT_EQ(model->predict(data.features), std::vector<float>(10, 0.0f));
}

TEST(CostModelTest, XGBoostLearnsARanking) {
  std::unique_ptr<CostModel> model = makeXGBoost(1);
  ASSERT_TRUE(model);
  expectLearnsRanking(*model);
}

TEST(CostModelTest, XGBoostIsDeterministicForASeed) {
  Synthetic train(300, 4), test(100, 5);
  std::vector<float> first, second;
  for (std::vector<float> *out : {&first, &second}) {
    std::unique_ptr<CostModel> model = makeXGBoost(42);
    ASSERT_TRUE(model);
    model->train(train.features, train.scores);
    *out = model->predict(test.features);
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(first, std::vector<float>(100, 0.0f));
}

TEST(CostModelTest, XGBoostRetrainsOnTheNewSetAndStartsNoThreads) {
  unsigned threads = countThreads();
  std::unique_ptr<CostModel> model = makeXGBoost(7);
  ASSERT_TRUE(model);
  Synthetic data(200, 6);
  model->train(data.features, data.scores);
  std::vector<float> before = model->predict(data.features);
  // Train replaces the set: inverted scores invert the ranking.
  std::vector<float> inverted;
  for (float score : data.scores)
    inverted.push_back(1.05f - score);
  model->train(data.features, inverted);
  EXPECT_LT(spearman(model->predict(data.features), before), -0.8);
  EXPECT_EQ(countThreads(), threads);
}

TEST(CostModelTest, XGBoostTrainsTwoThousandRowsQuickly) {
  std::unique_ptr<CostModel> model = makeXGBoost(1);
  ASSERT_TRUE(model);
  // 2000 rows as wide as real feature vectors.
  Synthetic data(2000, 8);
  for (std::vector<float> &row : data.features)
    row.resize(150, 0.5f);
  auto start = std::chrono::steady_clock::now();
  model->train(data.features, data.scores);
  auto trained = std::chrono::steady_clock::now();
  std::vector<float> predicted = model->predict(data.features);
  auto predictedAt = std::chrono::steady_clock::now();
  double trainSeconds = std::chrono::duration<double>(trained - start).count();
  double predictSeconds =
      std::chrono::duration<double>(predictedAt - trained).count();
  RecordProperty("train_ms", int(trainSeconds * 1000));
  RecordProperty("predict_ms", int(predictSeconds * 1000));
  std::printf("2000 x 150: train %.1f ms, predict %.1f ms\n",
              trainSeconds * 1e3, predictSeconds * 1e3);
  // Well under a second on one core; the bound leaves room for a loaded
  // machine.
  EXPECT_LT(trainSeconds, 2.0);
  EXPECT_LT(predictSeconds, 0.5);
  EXPECT_GT(spearman(predicted, data.scores), 0.9);
}

TEST(CostModelTest, MissingXGBoostLibraryIsAnError) {
  ScopedEnv env("KE_XGBOOST_LIBRARY", "/nonexistent/libxgboost.so");
  llvm::Expected<std::unique_ptr<CostModel>> model = createXGBoostCostModel(1);
  ASSERT_FALSE(bool(model));
  std::string message = llvm::toString(model.takeError());
  EXPECT_NE(message.find("cannot load XGBoost from "
                         "'/nonexistent/libxgboost.so'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("KE_XGBOOST_LIBRARY"), std::string::npos) << message;
  // The default model falls back to nearest neighbours.
  EXPECT_EQ(createDefaultCostModel(1)->getName(), "nearest-neighbour");
}

TEST(CostModelTest, NonXGBoostLibraryIsAnError) {
  // A library that loads but is not XGBoost.
  ScopedEnv env("KE_XGBOOST_LIBRARY", "libm.so.6");
  llvm::Expected<std::unique_ptr<CostModel>> model = createXGBoostCostModel(1);
  ASSERT_FALSE(bool(model));
  EXPECT_NE(llvm::toString(model.takeError()).find("is not an XGBoost library"),
            std::string::npos);
}

TEST(CostModelTest, NearestNeighbourPredictsZeroBeforeTraining) {
  std::unique_ptr<CostModel> model = createNearestNeighbourCostModel();
  EXPECT_EQ(model->getName(), "nearest-neighbour");
  Synthetic data(10, 3);
  EXPECT_EQ(model->predict(data.features), std::vector<float>(10, 0.0f));
}

TEST(CostModelTest, NearestNeighbourLearnsARanking) {
  std::unique_ptr<CostModel> model = createNearestNeighbourCostModel();
  expectLearnsRanking(*model);
}

TEST(CostModelTest, NearestNeighbourIsDeterministicAndExactOnTrainingRows) {
  Synthetic train(300, 4), test(100, 5);
  std::unique_ptr<CostModel> a = createNearestNeighbourCostModel(),
                             b = createNearestNeighbourCostModel();
  a->train(train.features, train.scores);
  b->train(train.features, train.scores);
  EXPECT_EQ(a->predict(test.features), b->predict(test.features));
  // A measured row is its own nearest neighbour.
  std::vector<float> own = a->predict({train.features[0]});
  EXPECT_NEAR(own[0], train.scores[0], 1e-3);
}

/// Records what it was trained on.
class RecordingModel final : public CostModel {
public:
  llvm::StringRef getName() const override { return "recording"; }
  void train(llvm::ArrayRef<std::vector<float>> features,
             llvm::ArrayRef<float> scores) override {
    rows.assign(features.begin(), features.end());
    trained.assign(scores.begin(), scores.end());
  }
  std::vector<float>
  predict(llvm::ArrayRef<std::vector<float>> features) override {
    return std::vector<float>(features.size(), 0.5f);
  }
  std::vector<std::vector<float>> rows;
  std::vector<float> trained;
};

TEST(CostModelTest, TransferTrainsOnThePriorsAndTheOwnSamples) {
  auto inner = std::make_unique<RecordingModel>();
  RecordingModel *recording = inner.get();
  std::unique_ptr<CostModel> model = createTransferCostModel(
      std::move(inner), {{1, 1}, {2, 2}}, {1.0f, 0.25f});
  EXPECT_EQ(model->getName(), "recording");
  model->train({{3, 3}}, {0.5f});
  EXPECT_EQ(recording->rows,
            (std::vector<std::vector<float>>{{1, 1}, {2, 2}, {3, 3}}));
  EXPECT_EQ(recording->trained, (std::vector<float>{1.0f, 0.25f, 0.5f}));
  // Each training replaces the last: the priors come once.
  model->train({{3, 3}, {4, 4}}, {0.5f, 1.0f});
  EXPECT_EQ(recording->rows.size(), 4u);
  EXPECT_EQ(model->predict({{9, 9}}), std::vector<float>{0.5f});
}

TEST(CostModelTest, TransferHelpsAModelRankUnseenCandidates) {
  // Priors from a task of the same shape teach the ranking before the
  // workload's own samples do.
  Synthetic prior(300, 11), own(3, 12), test(100, 13);
  std::unique_ptr<CostModel> cold = createNearestNeighbourCostModel();
  std::unique_ptr<CostModel> warm = createTransferCostModel(
      createNearestNeighbourCostModel(), prior.features, prior.scores);
  cold->train(own.features, own.scores);
  warm->train(own.features, own.scores);
  EXPECT_GT(spearman(warm->predict(test.features), test.scores),
            spearman(cold->predict(test.features), test.scores));
}

} // namespace
