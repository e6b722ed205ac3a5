//===- Passes.h - The steps of ke's GPU lowering ----------------*- C++ -*-===//
//
// Declarations generated from Passes.td (mlir-tblgen -gen-pass-decls): the
// create functions and registerKeCodegenPasses, which only tools call
// (ke/InitAll/InitAll.h); the lowering itself builds them in C++.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PASSES_H
#define KE_CODEGEN_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace ke {

#define GEN_PASS_DECL
#include "ke/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ke/Codegen/Passes.h.inc"

} // namespace ke

#endif // KE_CODEGEN_PASSES_H
