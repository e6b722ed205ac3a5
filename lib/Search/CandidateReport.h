//===- CandidateReport.h - What a candidate's child reports -----*- C++ -*-===//
//
// Evaluators run each candidate in a forked child (ke/Runtime/ChildProcess.h)
// that reports its outcome as one JSON object: the error class, a message,
// the relative error and the timed runs. This is that report, both ends.
//
// Private to lib/Search.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SEARCH_CANDIDATEREPORT_H
#define KE_LIB_SEARCH_CANDIDATEREPORT_H

#include "ke/Runtime/ChildProcess.h"
#include "ke/Search/Evaluator.h"

#include "mlir/IR/Diagnostics.h"

namespace ke {

/// Collects error diagnostics as text, so a child can report them.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);
  std::string text;

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// Writes the child's report.
void writeCandidateReport(llvm::raw_ostream &report, ErrorClass error,
                          llvm::StringRef message,
                          const Measurement *measurement, double relativeError,
                          bool earlyStop = false);

/// Compares every result in `actual` (a full argument list) with
/// `reference` (the reference's results, in argument order) by relative L2
/// error; `worst` gets the largest. On a result over its element type's
/// tolerance, writes the wrong-result report and returns false.
bool checkAgainstReference(llvm::raw_ostream &report,
                           llvm::ArrayRef<HostBuffer> actual,
                           llvm::ArrayRef<std::optional<HostBuffer>> reference,
                           double &worst);

/// The record of `schedule` (none for the reference) from its child's end
/// and report: a timeout, a crash (a signal, a non-zero exit or no readable
/// report) or what the report says.
CandidateRecord readCandidateReport(const ChildResult &child,
                                    const Schedule *schedule);

} // namespace ke

#endif // KE_LIB_SEARCH_CANDIDATEREPORT_H
