//===- Features.h - Cost-model features of a candidate ----------*- C++ -*-===//
//-*-===//
//
// The learned cost model ranks candidates it has not measured from a
// fixed-length vector of numbers per candidate. The features describe the
// scheduled loop nest (the rule's LoopNestDescription, ke/Sketch/SketchRule.h)
// together with the anchor's indexing maps, element types and the target:
// tile extents per level, bytes each operand's tile touches, arithmetic
// intensity, parallelism, vector width, partial tiles. docs/cost-model.md
// lists every feature and why it is there.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_FEATURES_H
#define KE_SEARCH_FEATURES_H

#include "ke/Schedule/Schedule.h"

#include <string>
#include <vector>

namespace ke {

/// Fixed-length features of one scheduled candidate: getNumFeatures()
/// numbers for every workload, sketch and target. NaN marks a feature that
/// does not apply (XGBoost treats it as missing).
std::vector<float> extractFeatures(mlir::Operation *anchor,
                                   const Schedule &schedule,
                                   const TargetDescription &target);

/// The length of every feature vector.
unsigned getNumFeatures();

/// The name of each feature, in order (docs/cost-model.md explains them).
const std::vector<std::string> &getFeatureNames();

/// Names this definition of the features (a hash of their names): stored
/// features of another definition are not comparable and not used.
const std::string &getFeaturesVersion();

} // namespace ke

#endif // KE_SEARCH_FEATURES_H
