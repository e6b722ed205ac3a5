//===- ScriptWriter.h - Building transform scripts as text ------*- C++ -*-===//
//
// Sketch rules write scripts as text (the form that is stored, diffed and
// replayed); this helper keeps the boilerplate and SSA naming in one place.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_SKETCH_SCRIPTWRITER_H
#define KE_LIB_SKETCH_SCRIPTWRITER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace ke {

class ScriptWriter {
public:
  ScriptWriter();

  /// A fresh SSA name with the given stem: %stem0, %stem1, ...
  std::string fresh(llvm::StringRef stem);
  /// Appends one line of the named sequence body (indentation added).
  void line(const std::string &text);
  /// A comment line in the script, to make stored scripts readable.
  void comment(const std::string &text);
  /// Vectorizes the payload function (static shapes only), then applies
  /// `patterns` (each the part after "transform.apply_patterns."), then CSE.
  void vectorizeFunction(llvm::ArrayRef<std::string> patterns);
  /// The complete module.
  std::string finish();

  /// "[a, b, c]".
  static std::string list(llvm::ArrayRef<int64_t> values);
  /// The handle %root of the payload.
  static constexpr llvm::StringLiteral root = "%root";

private:
  std::string body;
  unsigned counter = 0;
};

} // namespace ke

#endif // KE_LIB_SKETCH_SCRIPTWRITER_H
