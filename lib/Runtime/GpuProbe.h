//===- GpuProbe.h - Opening a GPU in a child process ------------*- C++ -*-===//
//
// probeCudaDevice and probeHipDevice open the device in a forked child, so
// that the parent stays free of GPU runtime state, and read back what the
// child reports as JSON (the device info, or {"error": ...}).
//
// Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_RUNTIME_GPUPROBE_H
#define KE_LIB_RUNTIME_GPUPROBE_H

#include "ke/Runtime/ChildProcess.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>

namespace ke {

/// Runs `open(ordinal)` in a child and returns the Info its device reports.
/// `what` names the device in the child's failure: "probing <what> #N
/// failed: ...".
template <typename Info, typename Device>
llvm::Expected<Info>
probeInChild(llvm::Expected<std::unique_ptr<Device>> (*open)(int),
             llvm::StringRef what, int ordinal, double timeoutSeconds) {
  ChildResult child = runInChild(
      [&](llvm::raw_ostream &report) -> int {
        llvm::Expected<std::unique_ptr<Device>> device = open(ordinal);
        if (!device) {
          report << llvm::json::Value(llvm::json::Object{
              {"error", llvm::toString(device.takeError())}});
          return 0;
        }
        report << (*device)->getInfo().toJSON();
        return 0;
      },
      timeoutSeconds);
  if (!child.succeeded())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "probing " + what + " #" + llvm::Twine(ordinal) +
            " failed: the child process ended with " + child.describe());
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(child.report);
  if (!parsed)
    return parsed.takeError();
  if (const llvm::json::Object *o = parsed->getAsObject())
    if (std::optional<llvm::StringRef> error = o->getString("error"))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), *error);
  return Info::fromJSON(*parsed);
}

} // namespace ke

#endif // KE_LIB_RUNTIME_GPUPROBE_H
