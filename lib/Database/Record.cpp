//===- Record.cpp - Tuning records: checks and JSON
//------------------------===//
//
// The JSONL form of a record is one flat object with snake_case fields.
// Knobs are written as a JSON object when that reproduces the stored text
// byte for byte (the usual case: compact JSON from llvm::json), else as a
// string, so export followed by import never alters a record.
//
//===----------------------------------------------------------------------===//

#include "RecordFormat.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace ke;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Compact JSON text of a value (llvm::json prints objects with sorted keys).
std::string printCompact(const Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

/// A JSON number, or null where JSON has no spelling for the value.
Value numberOrNull(double value) {
  if (std::isfinite(value))
    return value;
  return nullptr;
}

/// Every field toJSON writes; fromJSON refuses others (a misspelt field
/// would otherwise be dropped without a word).
constexpr llvm::StringLiteral kFields[] = {
    "workload",       "target",       "device",        "driver",
    "ke_version",     "llvm_version", "pipeline_hash", "role",
    "sketch",         "knobs",        "script",        "seconds",
    "median_seconds", "error",        "message",       "timestamp"};

} // namespace

llvm::Error detail::validateRecord(const TuningRecord &record) {
  if (record.workloadKey.empty())
    return fail("empty workload key");
  if (record.target.empty())
    return fail("empty target");
  if (!llvm::is_contained({"reference", "untuned", "trial", "recheck",
                           "final"},
                          record.role))
    return fail("unknown role '" + record.role +
                "' (expected reference, untuned, trial, recheck or final)");
  if (record.error.empty())
    return fail("empty error class (\"none\" for a valid record)");
  if (!record.knobs.empty()) {
    llvm::Expected<Value> knobs = llvm::json::parse(record.knobs);
    if (!knobs)
      return fail("knobs are not JSON: " + llvm::toString(knobs.takeError()));
    if (!knobs->getAsObject())
      return fail("knobs are not a JSON object");
  }
  for (double seconds : record.seconds)
    if (!std::isfinite(seconds))
      return fail("a repeat time is not a finite number");
  if (record.isValid() &&
      !(std::isfinite(record.medianSeconds) && record.medianSeconds > 0))
    return fail("a valid record needs a finite, positive median time");
  return llvm::Error::success();
}

std::string detail::encodeSeconds(llvm::ArrayRef<double> seconds) {
  Array array;
  for (double value : seconds)
    array.push_back(numberOrNull(value));
  return printCompact(Value(std::move(array)));
}

std::optional<std::vector<double>> detail::decodeSeconds(llvm::StringRef text) {
  llvm::Expected<Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const Array *array = parsed->getAsArray();
  if (!array)
    return std::nullopt;
  std::vector<double> seconds;
  for (const Value &element : *array) {
    std::optional<double> number = element.getAsNumber();
    if (!number)
      return std::nullopt;
    seconds.push_back(*number);
  }
  return seconds;
}

Value TuningRecord::toJSON() const {
  Value knobsValue = knobs;
  if (!knobs.empty()) {
    llvm::Expected<Value> parsed = llvm::json::parse(knobs);
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    else if (parsed->getAsObject() && printCompact(*parsed) == knobs)
      knobsValue = std::move(*parsed);
  }
  Array times;
  for (double value : seconds)
    times.push_back(numberOrNull(value));
  return Object{{"workload", workloadKey},
                {"target", target},
                {"device", device},
                {"driver", driver},
                {"ke_version", keVersion},
                {"llvm_version", llvmVersion},
                {"pipeline_hash", pipelineHash},
                {"role", role},
                {"sketch", sketch},
                {"knobs", std::move(knobsValue)},
                {"script", script},
                {"seconds", std::move(times)},
                {"median_seconds", numberOrNull(medianSeconds)},
                {"error", error},
                {"message", message},
                {"timestamp", timestamp}};
}

llvm::Expected<TuningRecord> TuningRecord::fromJSON(const Value &value) {
  const Object *object = value.getAsObject();
  if (!object)
    return fail("expected a JSON object");
  llvm::StringSet<> known;
  for (llvm::StringRef field : kFields)
    known.insert(field);
  for (const auto &entry : *object)
    if (!known.contains(entry.first))
      return fail("unknown field '" + entry.first.str() + "'");

  TuningRecord record;
  auto readString = [&](llvm::StringRef field,
                        std::string &out) -> llvm::Error {
    const Value *fieldValue = object->get(field);
    if (!fieldValue)
      return fail("missing field '" + field + "'");
    std::optional<llvm::StringRef> text = fieldValue->getAsString();
    if (!text)
      return fail("field '" + field + "' is not a string");
    out = text->str();
    return llvm::Error::success();
  };
  std::pair<llvm::StringRef, std::string *> strings[] = {
      {"workload", &record.workloadKey},
      {"target", &record.target},
      {"device", &record.device},
      {"driver", &record.driver},
      {"ke_version", &record.keVersion},
      {"llvm_version", &record.llvmVersion},
      {"pipeline_hash", &record.pipelineHash},
      {"role", &record.role},
      {"sketch", &record.sketch},
      {"script", &record.script},
      {"error", &record.error},
      {"message", &record.message}};
  for (auto &[field, out] : strings)
    if (llvm::Error error = readString(field, *out))
      return std::move(error);

  const Value *knobs = object->get("knobs");
  if (!knobs)
    return fail("missing field 'knobs'");
  if (std::optional<llvm::StringRef> text = knobs->getAsString())
    record.knobs = text->str();
  else if (knobs->getAsObject())
    record.knobs = printCompact(*knobs);
  else
    return fail("field 'knobs' is neither an object nor a string");

  const Value *seconds = object->get("seconds");
  if (!seconds)
    return fail("missing field 'seconds'");
  const Array *times = seconds->getAsArray();
  if (!times)
    return fail("field 'seconds' is not an array");
  for (const Value &time : *times) {
    std::optional<double> number = time.getAsNumber();
    if (!number)
      return fail("field 'seconds' holds something other than a number");
    record.seconds.push_back(*number);
  }

  const Value *median = object->get("median_seconds");
  if (!median)
    return fail("missing field 'median_seconds'");
  if (median->getAsNull())
    record.medianSeconds = std::numeric_limits<double>::quiet_NaN();
  else if (std::optional<double> number = median->getAsNumber())
    record.medianSeconds = *number;
  else
    return fail("field 'median_seconds' is neither a number nor null");

  const Value *timestamp = object->get("timestamp");
  if (!timestamp)
    return fail("missing field 'timestamp'");
  std::optional<int64_t> epochSeconds = timestamp->getAsInteger();
  if (!epochSeconds)
    return fail("field 'timestamp' is not an integer");
  record.timestamp = *epochSeconds;

  if (llvm::Error error = detail::validateRecord(record))
    return std::move(error);
  return record;
}
