//===- Passes.h - ke's passes for MLIR pass pipelines -----------*- C++ -*-===//
//
// Declarations generated from Passes.td (mlir-tblgen -gen-pass-decls): the
// pass options structs, the create functions and registerKeTransformsPasses.
//
//===----------------------------------------------------------------------===//
#ifndef KE_TRANSFORMS_PASSES_H
#define KE_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace ke {

#define GEN_PASS_DECL
#include "ke/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ke/Transforms/Passes.h.inc"

} // namespace ke

#endif // KE_TRANSFORMS_PASSES_H
