//===- WorkloadsCommand.cpp - ke-opt workloads ----------------------------===//
//
// Prints one JSON object per line and workload, merged by key across all
// inputs. A file that fails to load is reported with its location; the
// others are still printed, and the exit code is 1.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/InitAll/InitAll.h"
#include "ke/Support/InputFile.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::list<std::string>
    workloadInputs(cl::Positional, cl::OneOrMore, cl::desc("<input.mlir>..."),
               cl::sub(ke::getWorkloadsCommand()));
static cl::opt<bool> printSignatures(
    "print-signatures",
    cl::desc("Add the canonical signature that each key hashes"),
    cl::sub(ke::getWorkloadsCommand()));

int ke::runWorkloadsCommand() {
  std::unique_ptr<MLIRContext> context = createToolContext();
  LoadedInputs inputs = loadInputs(workloadInputs, *context);
  const std::vector<Workload> &workloads = inputs.workloads;
  bool failed = inputs.failed;

  if (workloads.empty() && !failed)
    llvm::errs() << "ke-opt workloads: remark: no linalg ops in the input; "
                    "nothing to tune\n";
  for (const Workload &workload : workloads) {
    if (!printSignatures) {
      printWorkloadJSON(workload, llvm::outs());
    } else {
      // Re-emit the object with the signature appended.
      std::string text;
      llvm::raw_string_ostream os(text);
      printWorkloadJSON(workload, os);
      text.pop_back(); // the closing brace
      llvm::outs() << text << ",\"signature\":"
                   << llvm::json::Value(getCanonicalSignature(workload.firstOp))
                   << "}";
    }
    llvm::outs() << '\n';
  }
  return failed ? 1 : 0;
}
