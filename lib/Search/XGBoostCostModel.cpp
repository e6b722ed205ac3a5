//===- XGBoostCostModel.cpp - Gradient-boosted trees through dlopen -------===//
//
// ke-opt links LLVM and MLIR statically and must run where XGBoost is not
// installed, so libxgboost is not linked: its C API is looked up with
// dlopen/dlsym on first use. The declarations come from XGBoost's own
// c_api.h, so a signature change is a compile error, not a crash. The
// library is opened RTLD_LOCAL, so neither it nor its OpenMP runtime
// (libgomp) can satisfy symbols of the JIT-compiled candidates, which bind to
// LLVM's libomp.
//
//===----------------------------------------------------------------------===//

#include "ke/Search/CostModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <xgboost/c_api.h>

#include <dlfcn.h>

#include <cmath>
#include <map>
#include <mutex>
#include <string>

using namespace ke;

namespace {

/// The XGBoost C functions ke uses, resolved from one loaded library.
struct XGBoostApi {
  decltype(&XGBGetLastError) getLastError;
  decltype(&XGDMatrixCreateFromMat) matrixCreateFromMat;
  decltype(&XGDMatrixSetFloatInfo) matrixSetFloatInfo;
  decltype(&XGDMatrixFree) matrixFree;
  decltype(&XGBoosterCreate) boosterCreate;
  decltype(&XGBoosterSetParam) boosterSetParam;
  decltype(&XGBoosterUpdateOneIter) boosterUpdateOneIter;
  decltype(&XGBoosterPredict) boosterPredict;
  decltype(&XGBoosterFree) boosterFree;
};

template <typename Function>
bool resolve(void *library, const char *name, Function &function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

llvm::Expected<XGBoostApi> loadFrom(const std::string &path) {
  // RTLD_LOCAL: see the file comment. The library is never closed: XGBoost
  // and libgomp keep global state that does not survive unloading.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("cannot load XGBoost from '{0}': {1} (install "
                      "libxgboost0, or set KE_XGBOOST_LIBRARY to the path of "
                      "libxgboost.so)",
                      path, error ? error : "unknown error"));
  }
  XGBoostApi api;
  std::string missing;
  auto need = [&](const char *name, auto &function) {
    if (!resolve(library, name, function) && missing.empty())
      missing = name;
  };
  need("XGBGetLastError", api.getLastError);
  need("XGDMatrixCreateFromMat", api.matrixCreateFromMat);
  need("XGDMatrixSetFloatInfo", api.matrixSetFloatInfo);
  need("XGDMatrixFree", api.matrixFree);
  need("XGBoosterCreate", api.boosterCreate);
  need("XGBoosterSetParam", api.boosterSetParam);
  need("XGBoosterUpdateOneIter", api.boosterUpdateOneIter);
  need("XGBoosterPredict", api.boosterPredict);
  need("XGBoosterFree", api.boosterFree);
  if (!missing.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("'{0}' is not an XGBoost library: it has no {1}", path,
                      missing));
  return api;
}

/// The API of the library $KE_XGBOOST_LIBRARY names, else of
/// libxgboost.so.0 on the loader's search path. Loaded once per path.
llvm::Expected<const XGBoostApi *> getXGBoostApi() {
  std::string path = "libxgboost.so.0";
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("KE_XGBOOST_LIBRARY"))
    path = *env;
  static std::mutex mutex;
  static std::map<std::string, XGBoostApi> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(path);
  if (it == loaded.end()) {
    llvm::Expected<XGBoostApi> api = loadFrom(path);
    if (!api)
      return api.takeError();
    it = loaded.emplace(path, *api).first;
  }
  return &it->second;
}

class XGBoostCostModel final : public CostModel {
public:
  XGBoostCostModel(const XGBoostApi &api, uint64_t seed)
      : api(api), seed(seed) {}
  ~XGBoostCostModel() override { reset(); }

  llvm::StringRef getName() const override { return "xgboost"; }

  void train(llvm::ArrayRef<std::vector<float>> features,
             llvm::ArrayRef<float> scores) override {
    reset();
    size_t n = std::min(features.size(), scores.size());
    if (n == 0)
      return;
    width = features.front().size();
    DMatrixHandle matrix = makeMatrix(features.take_front(n));
    if (!matrix)
      return;
    // Weighted squared error, as Ansor trains its model: the weight of a
    // sample is its score, so the fast candidates, the ones the search has
    // to tell apart, are fitted most closely.
    std::vector<float> labels(scores.begin(), scores.begin() + n);
    std::vector<float> weights;
    for (float score : labels)
      weights.push_back(std::max(score, 0.1f));
    BoosterHandle created = nullptr;
    bool ok =
        check(api.matrixSetFloatInfo(matrix, "label", labels.data(), n)) &&
        check(api.matrixSetFloatInfo(matrix, "weight", weights.data(), n)) &&
        check(api.boosterCreate(&matrix, 1, &created));
    booster = created;
    // XGBoost reads the seed as a 32-bit int.
    std::string seedText = std::to_string(seed & 0x7fffffff);
    // One thread: the explorer runs while measured candidates use the cores.
    const std::pair<const char *, const char *> params[] = {
        {"objective", "reg:squarederror"},
        {"tree_method", "hist"},
        {"max_depth", "6"},
        {"eta", "0.2"},
        {"gamma", "0.001"},
        {"min_child_weight", "0"},
        {"nthread", "1"},
        {"seed", seedText.c_str()},
        {"verbosity", "0"}};
    for (auto [name, value] : params)
      ok = ok && check(api.boosterSetParam(booster, name, value));
    for (int round = 0; ok && round < kRounds; ++round)
      ok = check(api.boosterUpdateOneIter(booster, round, matrix));
    api.matrixFree(matrix);
    if (!ok)
      reset();
  }

  std::vector<float>
  predict(llvm::ArrayRef<std::vector<float>> features) override {
    std::vector<float> predictions(features.size(), 0.0f);
    if (!booster || features.empty())
      return predictions;
    DMatrixHandle matrix = makeMatrix(features);
    if (!matrix)
      return predictions;
    bst_ulong length = 0;
    const float *result = nullptr;
    if (check(api.boosterPredict(booster, matrix, /*option_mask=*/0,
                                 /*ntree_limit=*/0, /*training=*/0, &length,
                                 &result)) &&
        length == features.size())
      predictions.assign(result, result + length);
    api.matrixFree(matrix);
    return predictions;
  }

private:
  static constexpr int kRounds = 100;

  /// Rows as one dense matrix; NaN is XGBoost's missing value. Rows of
  /// another length than the training rows are padded with NaN or cut.
  DMatrixHandle makeMatrix(llvm::ArrayRef<std::vector<float>> rows) {
    std::vector<float> data(rows.size() * width, NAN);
    for (size_t r = 0; r < rows.size(); ++r)
      std::copy_n(rows[r].begin(), std::min(width, rows[r].size()),
                  data.begin() + r * width);
    DMatrixHandle matrix = nullptr;
    if (!check(api.matrixCreateFromMat(data.data(), rows.size(), width, NAN,
                                       &matrix)))
      return nullptr;
    return matrix;
  }

  /// Reports a failed call once (the model then predicts 0, like an
  /// untrained one, and the search goes on).
  bool check(int status) {
    if (status == 0)
      return true;
    if (!reported) {
      reported = true;
      llvm::errs() << "ke: warning: XGBoost failed: " << api.getLastError()
                   << "\n";
    }
    return false;
  }

  void reset() {
    if (booster)
      api.boosterFree(booster);
    booster = nullptr;
  }

  const XGBoostApi &api;
  uint64_t seed;
  BoosterHandle booster = nullptr;
  size_t width = 0;
  bool reported = false;
};

} // namespace

llvm::Expected<std::unique_ptr<CostModel>>
ke::createXGBoostCostModel(uint64_t seed) {
  llvm::Expected<const XGBoostApi *> api = getXGBoostApi();
  if (!api)
    return api.takeError();
  return std::make_unique<XGBoostCostModel>(**api, seed);
}
