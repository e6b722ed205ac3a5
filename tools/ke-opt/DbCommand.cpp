//===- DbCommand.cpp - ke-opt db ------------------------------------------===//
//
// `ke-opt db list|best|export|import` reads and moves tuning records (see
// docs/database.md). Readers open the database with openExisting(), so a
// mistyped --db is an error rather than a new empty file; import is the one
// action that creates a database.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Database/Database.h"
#include "ke/Target/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;
using namespace ke;

static cl::list<std::string>
    dbArgs(cl::Positional, cl::ZeroOrMore,
           cl::desc("list | best | export | import <file.jsonl>"),
           cl::sub(getDbCommand()));
static cl::opt<std::string>
    bestTarget("target",
               cl::desc("db best: only this target (default: every target)"),
               cl::value_desc("target"), cl::sub(getDbCommand()));
static cl::opt<std::string> bestPipelineHash(
    "pipeline-hash",
    cl::desc("db best: only records of this lowering pipeline (default: any)"),
    cl::value_desc("hash"), cl::sub(getDbCommand()));
static cl::opt<std::string>
    exportOutput("o", cl::desc("db export: output file (default: stdout)"),
                 cl::value_desc("file"), cl::init("-"),
                 cl::sub(getDbCommand()));

namespace {

/// The error prefix of every db action ("ke-opt db: error: ").
llvm::raw_ostream &dbError() { return subcommandError("db"); }

/// Opens the database readers use; reports and returns null on failure.
std::unique_ptr<TuningDatabase> openForReading() {
  std::string path = getDatabasePath();
  if (!llvm::sys::fs::exists(path)) {
    dbError() << path << ": no such tuning database (--db PATH or $KE_DB "
              << "names it; `ke-opt tune` or `ke-opt db import` creates it)\n";
    return nullptr;
  }
  llvm::Expected<std::unique_ptr<TuningDatabase>> database =
      TuningDatabase::openExisting(path);
  if (!database) {
    dbError() << llvm::toString(database.takeError()) << '\n';
    return nullptr;
  }
  return std::move(*database);
}

/// The database readers use, with its per-workload summaries.
struct ListedDatabase {
  std::unique_ptr<TuningDatabase> database;
  std::vector<TuningDatabase::Summary> summaries;
};

/// Opens the database and lists it; std::nullopt (after the message) when
/// it could not be opened or read.
std::optional<ListedDatabase> openAndList() {
  std::unique_ptr<TuningDatabase> database = openForReading();
  if (!database)
    return std::nullopt;
  llvm::Expected<std::vector<TuningDatabase::Summary>> summaries =
      database->list();
  if (!summaries) {
    dbError() << llvm::toString(summaries.takeError()) << '\n';
    return std::nullopt;
  }
  return ListedDatabase{std::move(database), std::move(*summaries)};
}

int runList() {
  std::optional<ListedDatabase> listed = openAndList();
  if (!listed)
    return 1;
  for (const TuningDatabase::Summary &summary : listed->summaries) {
    llvm::json::Value best = nullptr;
    if (summary.bestSeconds)
      best = *summary.bestSeconds;
    llvm::outs() << llvm::json::Object{{"workload", summary.workloadKey},
                                       {"op", summary.opName},
                                       {"target", summary.target},
                                       {"records", summary.records},
                                       {"valid", summary.valid},
                                       {"best_seconds", std::move(best)}}
                 << '\n';
  }
  return 0;
}

int runBest() {
  // The target string is normalized as tuning normalizes it, and a
  // misspelt one is an error rather than an empty answer.
  std::optional<std::string> target;
  if (bestTarget.getNumOccurrences()) {
    llvm::Expected<TargetDescription> parsed = parseTarget(bestTarget);
    if (!parsed) {
      dbError() << llvm::toString(parsed.takeError()) << '\n';
      return 1;
    }
    target = parsed->name;
  }
  std::optional<ListedDatabase> listed = openAndList();
  if (!listed)
    return 1;
  for (const TuningDatabase::Summary &summary : listed->summaries) {
    if (target && summary.target != *target)
      continue;
    llvm::Expected<std::optional<TuningRecord>> best = listed->database->getBest(
        summary.workloadKey, summary.target, bestPipelineHash);
    if (!best) {
      dbError() << llvm::toString(best.takeError()) << '\n';
      return 1;
    }
    if (!*best)
      continue;
    llvm::json::Value line = (*best)->toJSON();
    line.getAsObject()->insert({"op", summary.opName});
    llvm::outs() << line << '\n';
  }
  return 0;
}

int runExport() {
  std::unique_ptr<TuningDatabase> database = openForReading();
  if (!database)
    return 1;
  std::error_code error;
  llvm::ToolOutputFile output(exportOutput, error, llvm::sys::fs::OF_None);
  if (error) {
    dbError() << exportOutput
              << ": cannot open output file: " << error.message() << '\n';
    return 1;
  }
  uint64_t skipped = 0;
  if (llvm::Error failure = database->exportJSONL(output.os(), &skipped)) {
    dbError() << llvm::toString(std::move(failure)) << '\n';
    return 1;
  }
  output.os().flush();
  if (output.os().has_error()) {
    dbError() << exportOutput
              << ": cannot write: " << output.os().error().message() << '\n';
    output.os().clear_error();
    return 1;
  }
  if (skipped)
    llvm::WithColor::warning(llvm::errs(), "ke-opt db")
        << skipped << " unreadable record(s) left out of the export\n";
  output.keep();
  return 0;
}

int runImport(llvm::StringRef file) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getFileOrSTDIN(file, /*IsText=*/true);
  if (!input) {
    dbError() << file
              << ": cannot open input file: " << input.getError().message()
              << '\n';
    return 1;
  }
  std::string path = getDatabasePath();
  llvm::Expected<std::unique_ptr<TuningDatabase>> database =
      TuningDatabase::open(path);
  if (!database) {
    dbError() << llvm::toString(database.takeError()) << '\n';
    return 1;
  }
  uint64_t duplicates = 0;
  llvm::Expected<uint64_t> added =
      (*database)->importJSONL((*input)->getBuffer(), &duplicates);
  if (!added) {
    dbError() << file << ": " << llvm::toString(added.takeError())
              << "; nothing imported\n";
    return 1;
  }
  llvm::outs() << llvm::json::Object{{"database", path},
                                     {"added", *added},
                                     {"duplicates", duplicates}}
               << '\n';
  return 0;
}

} // namespace

int ke::runDbCommand() {
  if (dbArgs.empty()) {
    dbError() << "no action given; expected list, best, export or import\n";
    return 1;
  }
  llvm::StringRef action = dbArgs.front();
  size_t expectedArgs = action == "import" ? 2 : 1;
  if (action != "list" && action != "best" && action != "export" &&
      action != "import") {
    dbError() << "unknown action '" << action
              << "'; expected list, best, export or import\n";
    return 1;
  }
  // Options that another action would silently ignore are mistakes.
  if (action != "best" && (bestTarget.getNumOccurrences() ||
                           bestPipelineHash.getNumOccurrences())) {
    dbError() << "--target and --pipeline-hash apply to 'db best' only\n";
    return 1;
  }
  if (action != "export" && exportOutput.getNumOccurrences()) {
    dbError() << "-o applies to 'db export' only\n";
    return 1;
  }
  if (dbArgs.size() < expectedArgs) {
    dbError() << "db import needs the JSONL file to read\n";
    return 1;
  }
  if (dbArgs.size() > expectedArgs) {
    dbError() << "unexpected argument '" << dbArgs[expectedArgs]
              << "' after 'db " << action << "'\n";
    return 1;
  }
  if (action == "list")
    return runList();
  if (action == "best")
    return runBest();
  if (action == "export")
    return runExport();
  return runImport(dbArgs[1]);
}
