//===- ScriptWriter.cpp - Building transform scripts as text --------------===//

#include "ScriptWriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace ke;

ScriptWriter::ScriptWriter() = default;

std::string ScriptWriter::fresh(llvm::StringRef stem) {
  return ("%" + stem + llvm::Twine(counter++)).str();
}

void ScriptWriter::line(const std::string &text) {
  body += "    " + text + "\n";
}

void ScriptWriter::comment(const std::string &text) {
  body += "    // " + text + "\n";
}

void ScriptWriter::vectorizeFunction(llvm::ArrayRef<std::string> patterns) {
  std::string func = fresh("func"), vectorized = fresh("func");
  line(func + " = transform.structured.match ops{[\"func.func\"]} in %root : "
              "(!transform.any_op) -> !transform.any_op");
  line(vectorized + " = transform.structured.vectorize_children_and_apply_"
                    "patterns " +
       func + " : (!transform.any_op) -> !transform.any_op");
  line("transform.apply_patterns to " + vectorized + " {");
  for (const std::string &pattern : patterns)
    line("  transform.apply_patterns." + pattern);
  line("} : !transform.any_op");
  line("transform.apply_cse to " + vectorized + " : !transform.any_op");
}

std::string ScriptWriter::finish() {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: "
         "!transform.any_op {transform.readonly}) {\n" +
         body +
         "    transform.yield\n"
         "  }\n"
         "}\n";
}

std::string ScriptWriter::list(llvm::ArrayRef<int64_t> values) {
  return "[" +
         llvm::join(llvm::map_range(values,
                                    [](int64_t v) { return std::to_string(v); }),
                    ", ") +
         "]";
}
