//===- InitAll.h - Registration of what ke uses from MLIR/LLVM --*- C++ -*-===//
//
// ke registers only the dialects, passes, translations and LLVM backends its
// pipelines use, instead of MLIR's registerAll* helpers: those pull every
// dialect and all 22 LLVM backends into the static binary (181 MB against
// 118 MB stripped, see docs/building.md).
//
//===----------------------------------------------------------------------===//
#ifndef KE_INITALL_INITALL_H
#define KE_INITALL_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace ke {

/// Adds the dialects ke parses and produces, and their external interface
/// models (bufferization, tiling, conversion to LLVM, transform extensions,
/// GPU targets, LLVM IR translations), to `registry`.
void registerKeDialects(mlir::DialectRegistry &registry);

/// Registers ke's own passes (ke/Transforms/Passes.h) and the upstream
/// passes that ke's pipelines use, so they are available by name in ke-opt's
/// mlir-opt mode and in textual pipelines. Idempotent. Only tools call it:
/// ke's libraries build their pipelines in C++ (ke/Codegen/PassPipeline.h)
/// and need nothing registered.
void registerKePasses();

} // namespace ke

#endif // KE_INITALL_INITALL_H
