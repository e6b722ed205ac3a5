//===- Passes.h - Graph preparation passes ----------------------*- C++ -*-===//
//
// Declarations generated from Passes.td (mlir-tblgen -gen-pass-decls): the
// pass options structs, the create functions and registerKeGraphPasses,
// which only tools call (ke/InitAll/InitAll.h); prepareGraph builds the
// passes in C++.
//
//===----------------------------------------------------------------------===//
#ifndef KE_GRAPH_PASSES_H
#define KE_GRAPH_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace ke {

#define GEN_PASS_DECL
#include "ke/Graph/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ke/Graph/Passes.h.inc"

} // namespace ke

#endif // KE_GRAPH_PASSES_H
