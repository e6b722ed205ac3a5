//===- KePlugin.cpp - ke's passes as an mlir-opt pass plugin --------------===//
//
//   mlir-opt-22 --load-pass-plugin=build/lib/KePlugin.so \
//     --pass-pipeline="builtin.module(ke-apply-tuned-schedules{db=DB})"
// registers ke's passes (ke/Transforms/Passes.h) with the host's pass
// registry. The plugin links MLIR and LLVM as the shared libraries the host
// uses (libMLIR.so, libLLVM.so): a second, static copy of MLIR in the
// process would have its own TypeIDs and registries. See docs/compile.md.
//
//===----------------------------------------------------------------------===//

#include "ke/Transforms/Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "KePlugin", LLVM_VERSION_STRING,
          [] { ke::registerKeTransformsPasses(); }};
}
