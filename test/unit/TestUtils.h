//===- TestUtils.h - Parsing helpers for unit tests -------------*- C++ -*-===//
#ifndef KE_TEST_UNIT_TESTUTILS_H
#define KE_TEST_UNIT_TESTUTILS_H

#include "ke/InitAll/InitAll.h"
#include "ke/Sketch/SketchRule.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

namespace ke::testing {

/// Replaces $0..$9 in `pattern` with `args` (MLIR text is full of braces, so
/// formatv's {N} markers do not fit).
inline std::string fillTemplate(llvm::StringRef pattern,
                                llvm::ArrayRef<std::string> args) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '$' && i + 1 < pattern.size() &&
        llvm::isDigit(pattern[i + 1]) &&
        static_cast<size_t>(pattern[i + 1] - '0') < args.size()) {
      out += args[pattern[i + 1] - '0'];
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

/// A rule with no knobs that emits a fixed script: drives evaluators and
/// feature extraction without a real sketch.
class FixedScriptRule final : public SketchRule {
public:
  explicit FixedScriptRule(std::string script, std::string name = "test.fixed")
      : script(std::move(script)), name(std::move(name)) {}
  llvm::StringRef getName() const override { return name; }
  bool matches(mlir::Operation *, const TargetDescription &) const override {
    return true;
  }
  KnobSpace getKnobSpace(mlir::Operation *,
                         const TargetDescription &) const override {
    return {};
  }
  std::string emitScript(mlir::Operation *, const TargetDescription &,
                         const KnobAssignment &) const override {
    return script;
  }

private:
  std::string script, name;
};

/// A context with ke's dialects that parses MLIR snippets.
class IRTest : public ::testing::Test {
protected:
  // Single-threaded: the evaluator forks, which must not happen while other
  // threads hold locks.
  IRTest() : context(makeRegistry(), mlir::MLIRContext::Threading::DISABLED) {}

  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    registerKeDialects(registry);
    return registry;
  }

  /// Parses `source`; fails the test when it does not parse.
  mlir::ModuleOp parse(llvm::StringRef source) {
    modules.push_back(mlir::parseSourceString<mlir::ModuleOp>(
        source, mlir::ParserConfig(&context)));
    EXPECT_TRUE(modules.back()) << "failed to parse:\n" << source.str();
    return modules.back().get();
  }

  /// The workloads of `source`, merged by key.
  std::vector<Workload> workloadsOf(llvm::StringRef source) {
    std::vector<Workload> workloads;
    if (mlir::ModuleOp module = parse(source))
      collectWorkloads(module, workloads);
    return workloads;
  }

  /// The single workload of `source`.
  Workload onlyWorkload(llvm::StringRef source) {
    std::vector<Workload> workloads = workloadsOf(source);
    EXPECT_EQ(workloads.size(), 1u);
    return workloads.empty() ? Workload() : workloads.front();
  }

  /// The key of the single anchor in `source`.
  std::string keyOf(llvm::StringRef source) { return onlyWorkload(source).key; }

  mlir::MLIRContext context;
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
};

} // namespace ke::testing

#endif // KE_TEST_UNIT_TESTUTILS_H
