//===- CanonicalKey.cpp - Structural keys of workload anchors -------------===//
//
// The key must not change when SSA values, functions or locations are renamed
// or when ops are reordered, and must change with any shape, element type,
// indexing map, iterator type or body. So the signature is built from the op
// alone: its name, operand types, maps, iterators, inherent attributes and a
// printout of the body in which values are numbered by position.
//
//===----------------------------------------------------------------------===//

#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using namespace ke;

namespace {

/// Prints regions with values numbered in order of definition.
class BodyPrinter {
public:
  explicit BodyPrinter(llvm::raw_ostream &os) : os(os) {}

  void printRegion(Region &region) {
    for (Block &block : region) {
      os << "^bb(";
      llvm::interleaveComma(block.getArguments(), os, [&](BlockArgument arg) {
        define(arg);
        os << arg.getType();
      });
      os << ")\n";
      for (Operation &op : block)
        printOp(op);
    }
  }

private:
  void define(Value value) { ids.try_emplace(value, ids.size()); }

  /// Values from outside the body are described by what they are, never by
  /// name: a constant by its value, anything else by its type.
  void printUse(Value value) {
    auto it = ids.find(value);
    if (it != ids.end()) {
      os << '%' << it->second;
      return;
    }
    Attribute constant;
    if (matchPattern(value, m_Constant(&constant)))
      os << "const(" << constant << ")";
    else
      os << "ext(" << value.getType() << ")";
  }

  void printOp(Operation &op) {
    for (Value result : op.getResults())
      define(result);
    os << op.getName() << '(';
    llvm::interleaveComma(op.getOperands(), os,
                          [&](Value v) { printUse(v); });
    os << ')';
    if (!op.getAttrDictionary().empty())
      os << ' ' << op.getAttrDictionary();
    os << " -> (";
    llvm::interleaveComma(op.getResultTypes(), os);
    os << ")\n";
    for (Region &region : op.getRegions()) {
      os << "{\n";
      printRegion(region);
      os << "}\n";
    }
  }

  llvm::raw_ostream &os;
  llvm::DenseMap<Value, unsigned> ids;
};

/// Attributes that are re-stated elsewhere in the signature, or that only
/// cache derived information.
bool isRedundantAttribute(StringRef name) {
  return name == "operandSegmentSizes" || name == "indexing_maps" ||
         name == "iterator_types";
}

} // namespace

std::string ke::getCanonicalSignature(Operation *anchor) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << "op " << anchor->getName() << '\n';

  auto dps = dyn_cast<DestinationStyleOpInterface>(anchor);
  for (OpOperand &operand : anchor->getOpOperands()) {
    bool isInit = dps && dps.isDpsInit(&operand);
    os << (isInit ? "init " : "input ") << operand.get().getType() << '\n';
  }
  for (Type type : anchor->getResultTypes())
    os << "result " << type << '\n';

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor)) {
    for (AffineMap map : linalgOp.getIndexingMapsArray())
      os << "map " << map << '\n';
    os << "iterators";
    for (utils::IteratorType iterator : linalgOp.getIteratorTypesArray())
      os << ' ' << utils::stringifyIteratorType(iterator);
    os << '\n';
  }

  // Inherent attributes only: discardable ones (annotations a user or a pass
  // attached) must not change what is being computed.
  ArrayRef<StringAttr> inherentNames = anchor->getName().getAttributeNames();
  for (NamedAttribute attr : anchor->getAttrDictionary()) {
    if (!llvm::is_contained(inherentNames, attr.getName()) ||
        isRedundantAttribute(attr.getName().strref()))
      continue;
    os << "attr " << attr.getName().strref() << " = " << attr.getValue()
       << '\n';
  }

  BodyPrinter body(os);
  for (Region &region : anchor->getRegions()) {
    os << "body\n";
    body.printRegion(region);
  }
  return signature;
}

std::string ke::computeWorkloadKey(Operation *anchor) {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(getCanonicalSignature(anchor)));
  return llvm::toHex(llvm::ArrayRef(digest).take_front(16), /*LowerCase=*/true);
}
