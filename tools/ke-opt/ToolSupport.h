//===- ToolSupport.h - What several subcommands share -----------*- C++ -*-===//
#ifndef KE_TOOLS_KE_OPT_TOOLSUPPORT_H
#define KE_TOOLS_KE_OPT_TOOLSUPPORT_H

#include "ke/Graph/GraphPreparation.h"
#include "ke/Measure/Evaluator.h"
#include "ke/Target/Target.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <vector>

namespace ke {

/// Parsed inputs and their workloads, merged by key. The modules own the IR
/// the workloads point into.
struct LoadedInputs {
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  std::vector<Workload> workloads;
  /// True when some file failed to load (its errors were reported).
  bool failed = false;
};

/// Loads every file with located diagnostics through `context`'s handler,
/// and prepares its graph (ke/Graph) unless --no-prepare-graph.
LoadedInputs loadInputs(llvm::ArrayRef<std::string> files,
                        mlir::MLIRContext &context);

/// The graph preparation that --demote-f64 asks for.
GraphPreparationOptions getGraphPreparationOptions();

/// Parses the --target option; reports an error for `command` on failure.
std::optional<TargetDescription> parseTargetOption(llvm::StringRef command);

/// False, with an error for `command`, when no input files were given.
bool requireInputFiles(llvm::StringRef command);

/// The tuning database path: --db, else $KE_DB, else ke-tuning.db in the
/// working directory.
std::string getDatabasePath();

/// The GPU that tune and bench measure on, as probed.
struct ProbedGpu {
  /// "CUDA device #0: NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2, driver 13.0,
  /// bus 0000:19:00.0)"
  /// or "AMD GPU #0: AMD Instinct MI300X (gfx942:sramecc+:xnack-, 304 CUs,
  /// 4 MiB L2, HIP 6.2)".
  std::string description;
  /// CudaDeviceInfo::toJSON or HipDeviceInfo::toJSON.
  llvm::json::Value info = nullptr;
};

/// What `target`'s family calls a device, for messages: "CUDA device" or
/// "AMD GPU".
llvm::StringRef getGpuDeviceNoun(const TargetDescription &target);

/// Probes GPU `ordinal` of `target`'s family (in a child process: CUDA or
/// HIP) and checks that it runs code for `target`: fails with "no CUDA
/// driver ...", "no CUDA device ...", "no HIP runtime ...", "no AMD GPU ...",
/// a compute capability below the target's, or another AMD processor than
/// the target's (code objects are per processor). On success `target` takes
/// the device's multiprocessors, threads per block and shared memory (LDS)
/// per block (the sketch rules' limits) in place of its generation's table
/// values.
llvm::Expected<ProbedGpu> checkGpuDevice(TargetDescription &target,
                                         int ordinal);

/// What tune and bench measure on.
struct MeasuredTarget {
  TargetDescription target;
  /// The probed GPU, for GPU targets.
  std::optional<ProbedGpu> device;
};

/// The common start of tune and bench (`command`): --target parsed, which
/// must be this machine's CPU or a GPU target ("`what` measures on this
/// machine: ..."), input files given, and for GPU targets device `ordinal`
/// probed (checkGpuDevice) and, with `announce`, named on stderr ("[ke]
/// measuring on ..."). std::nullopt after an error for `command`.
std::optional<MeasuredTarget> prepareMeasuredTarget(llvm::StringRef command,
                                                    llvm::StringRef what,
                                                    int ordinal,
                                                    bool announce);

/// The context subcommands use: ke's dialects, single-threaded (candidate
/// evaluation forks, which must not happen while other threads hold locks).
std::unique_ptr<mlir::MLIRContext> createToolContext();

/// Where a GPU target's reference runs, from `--reference` (tune, bench).
ReferencePlace getReferencePlace();

} // namespace ke

#endif // KE_TOOLS_KE_OPT_TOOLSUPPORT_H
