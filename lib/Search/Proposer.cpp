//===- Proposer.cpp - Schedules proposed from outside the search ----------===//
//
// Map of this file:
//   ProposerStats              counts and the first messages
//   CommandProposer            /bin/sh -c CMD, request on stdin
//   ChatProposer               an OpenAI-compatible endpoint through curl
//   makeProposerRequest        what the proposer is told
//   parseProposals             what it answered, checked like user input
//
//===----------------------------------------------------------------------===//

#include "ke/Search/Proposer.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <cmath>

using namespace ke;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void ProposerStats::addMessage(std::string message) {
  // The summary keeps the first few: enough to see what went wrong.
  if (messages.size() < 5)
    messages.push_back(std::move(message));
}

llvm::json::Value ProposerStats::toJSON() const {
  return llvm::json::Object{{"calls", calls},
                            {"failed_calls", failedCalls},
                            {"proposed", proposed},
                            {"accepted", accepted},
                            {"rejected", rejected},
                            {"messages", llvm::json::Array(messages)}};
}

Proposer::~Proposer() = default;

namespace {

/// Temporary files removed when it goes out of scope.
struct TempFiles {
  std::vector<llvm::SmallString<128>> paths;
  /// Why a file could not be created (empty while all could).
  std::string error;
  ~TempFiles() {
    for (const auto &path : paths)
      llvm::sys::fs::remove(path);
  }
  /// A new file holding `contents`; empty (and `error` set) on failure.
  std::string create(llvm::StringRef prefix, llvm::StringRef contents = "") {
    llvm::SmallString<128> path;
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "ke-proposer-" + prefix, "txt", fd, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return "";
    }
    paths.push_back(path);
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << contents;
    return std::string(path);
  }
};

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "";
}

/// The last non-empty line of `text`, for messages.
std::string lastLine(llvm::StringRef text) {
  text = text.rtrim();
  return text.substr(text.rfind('\n') + 1).take_front(300).str();
}

/// Runs `args` with stdin from `input`, stdout to `output`; an error says
/// why it failed (`what` names it).
llvm::Error run(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                llvm::StringRef input, llvm::StringRef output,
                llvm::StringRef errors, double timeoutSeconds,
                llvm::StringRef what) {
  std::string message;
  bool failedToRun = false;
  int rc = llvm::sys::ExecuteAndWait(
      program, args, std::nullopt,
      {std::optional<llvm::StringRef>(input),
       std::optional<llvm::StringRef>(output),
       std::optional<llvm::StringRef>(errors)},
      unsigned(std::ceil(std::max(1.0, timeoutSeconds))), 0, &message,
      &failedToRun);
  if (failedToRun)
    return makeError(what + " could not run: " + message);
  if (rc == -2)
    return makeError(llvm::formatv("{0} timed out after {1:F1} s", what,
                                   timeoutSeconds)
                         .str());
  if (rc != 0) {
    std::string detail = lastLine(readFile(errors));
    return makeError(what + " failed (exit code " + llvm::Twine(rc) + ")" +
                     (detail.empty() ? "" : ": " + detail));
  }
  return llvm::Error::success();
}

/// `/bin/sh -c COMMAND`, the request on its stdin.
class CommandProposer final : public Proposer {
public:
  explicit CommandProposer(const ProposerOptions &options)
      : options(options) {}

  llvm::Expected<std::string> ask(const llvm::json::Value &request) override {
    TempFiles files;
    std::string text;
    llvm::raw_string_ostream(text) << request;
    std::string input = files.create("request", text);
    std::string output = files.create("reply");
    std::string errors = files.create("stderr");
    if (!files.error.empty())
      return makeError(files.error);
    llvm::StringRef args[] = {"/bin/sh", "-c", options.command};
    if (llvm::Error error = run("/bin/sh", args, input, output, errors,
                                options.timeoutSeconds, "the proposer command"))
      return std::move(error);
    return readFile(output);
  }

private:
  ProposerOptions options;
};

/// What the chat endpoint is told about its task.
constexpr llvm::StringLiteral kSystemPrompt =
    "You propose schedules for ke, an MLIR auto-scheduler. The user message "
    "is JSON: a workload (its op and IR, the target), its sketches with the "
    "allowed values of each knob, and the best schedules measured so far "
    "with their times in seconds. Reply with JSON only, in this form: "
    "{\"proposals\": [{\"sketch\": NAME, \"knobs\": {KNOB: VALUE, ...}}]}, "
    "at most `count` proposals that you expect to run faster than the best, "
    "none of them measured already, each giving every knob of its sketch "
    "one of the allowed values.";

/// An OpenAI-compatible chat completions endpoint, through curl.
class ChatProposer final : public Proposer {
public:
  explicit ChatProposer(const ProposerOptions &options) : options(options) {}

  llvm::Expected<std::string> ask(const llvm::json::Value &request) override {
    llvm::ErrorOr<std::string> curl = llvm::sys::findProgramByName("curl");
    if (!curl)
      return makeError("curl, which --proposer-url needs, is not on PATH");
    std::string content;
    llvm::raw_string_ostream(content) << request;
    llvm::json::Object body{
        {"messages",
         llvm::json::Array{
             llvm::json::Object{{"role", "system"}, {"content", kSystemPrompt}},
             llvm::json::Object{{"role", "user"}, {"content", content}}}},
        {"temperature", 0.7}};
    if (!options.model.empty())
      body["model"] = options.model;
    std::string bodyText;
    llvm::raw_string_ostream(bodyText) << llvm::json::Value(std::move(body));
    // The key goes through a file, not the command line other users see.
    std::string headers = "Content-Type: application/json\n";
    if (std::optional<std::string> key =
            llvm::sys::Process::GetEnv("KE_PROPOSER_API_KEY"))
      headers += "Authorization: Bearer " + *key + "\n";
    TempFiles files;
    std::string bodyFile = files.create("body", bodyText);
    std::string headerFile = files.create("headers", headers);
    std::string output = files.create("reply");
    std::string errors = files.create("stderr");
    std::string empty = files.create("stdin");
    // --write-out goes to stdout: the HTTP status.
    std::string statusFile = files.create("status");
    if (!files.error.empty())
      return makeError(files.error);
    std::string maxTime = llvm::formatv("{0}", options.timeoutSeconds).str();
    std::string headerArg = "@" + headerFile, dataArg = "@" + bodyFile;
    llvm::StringRef args[] = {*curl,      "--silent", "--show-error",
                              "--max-time", maxTime,  "--header",
                              headerArg,  "--data-binary", dataArg,
                              "--output", output,   "--write-out",
                              "%{http_code}", options.url};
    if (llvm::Error error = run(*curl, args, empty, statusFile, errors,
                                options.timeoutSeconds + 5,
                                "curl (--proposer-url)"))
      return std::move(error);
    std::string status = llvm::StringRef(readFile(statusFile)).trim().str();
    std::string reply = readFile(output);
    if (status != "200")
      return makeError("the endpoint answered HTTP " + status + ": " +
                       llvm::StringRef(reply).take_front(300));
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(reply);
    if (!parsed)
      return makeError("the endpoint's reply is not JSON: " +
                       llvm::toString(parsed.takeError()));
    const llvm::json::Object *object = parsed->getAsObject();
    const llvm::json::Array *choices =
        object ? object->getArray("choices") : nullptr;
    const llvm::json::Object *first =
        choices && !choices->empty() ? (*choices)[0].getAsObject() : nullptr;
    const llvm::json::Object *message =
        first ? first->getObject("message") : nullptr;
    std::optional<llvm::StringRef> text =
        message ? message->getString("content") : std::nullopt;
    if (!text)
      return makeError("the endpoint's reply has no choices[0].message."
                       "content");
    return text->str();
  }

private:
  ProposerOptions options;
};

} // namespace

std::unique_ptr<Proposer> ke::createProposer(const ProposerOptions &options) {
  if (!options.command.empty())
    return std::make_unique<CommandProposer>(options);
  if (!options.url.empty())
    return std::make_unique<ChatProposer>(options);
  return nullptr;
}

llvm::json::Value ke::makeProposerRequest(const SearchTask &task,
                                          unsigned count) {
  mlir::Operation *anchor = task.getAnchor();
  std::string ir;
  {
    llvm::raw_string_ostream os(ir);
    anchor->print(os, mlir::OpPrintingFlags().useLocalScope());
  }
  llvm::json::Array sketches;
  for (const Schedule &sketch : task.getSketches()) {
    llvm::json::Array knobs;
    for (const Knob &knob : sketch.space.knobs)
      knobs.push_back(llvm::json::Object{
          {"name", knob.name},
          {"values", llvm::json::Array(knob.choices)},
          {"default", knob.choices[knob.defaultIndex]}});
    sketches.push_back(llvm::json::Object{
        {"sketch", sketch.rule->getName()}, {"knobs", std::move(knobs)}});
  }
  // The best valid schedules, fastest first.
  std::vector<const MeasuredCandidate *> valid;
  for (const MeasuredCandidate &c : task.getHistory())
    if (c.record.isValid() && !c.record.earlyStop)
      valid.push_back(&c);
  llvm::sort(valid, [](const MeasuredCandidate *a, const MeasuredCandidate *b) {
    return a->record.measurement.median < b->record.measurement.median;
  });
  llvm::json::Array best;
  for (const MeasuredCandidate *c : llvm::ArrayRef(valid).take_front(8)) {
    llvm::json::Value schedule = c->schedule.toJSON();
    schedule.getAsObject()->insert({"seconds", c->record.measurement.median});
    best.push_back(std::move(schedule));
  }
  return llvm::json::Object{
      {"protocol", "ke-proposer-1"},
      {"count", count},
      {"target", task.getTarget().name},
      {"op", anchor->getName().getStringRef()},
      {"ir", llvm::StringRef(ir).take_front(8000)},
      {"sketches", std::move(sketches)},
      {"best", std::move(best)},
      {"measured", unsigned(task.getHistory().size())}};
}

/// The JSON inside a Markdown code fence, or `reply` itself.
static llvm::StringRef stripCodeFence(llvm::StringRef reply) {
  size_t open = reply.find("```");
  if (open == llvm::StringRef::npos)
    return reply.trim();
  llvm::StringRef rest = reply.drop_front(open + 3);
  rest = rest.drop_until([](char c) { return c == '\n'; }); // ```json
  size_t close = rest.find("```");
  return rest.take_front(close).trim();
}

llvm::Expected<std::vector<Schedule>>
ke::parseProposals(llvm::StringRef reply, const SearchTask &task,
                   unsigned count, ProposerStats &stats) {
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(stripCodeFence(reply));
  if (!parsed)
    return makeError("the proposer's reply is not JSON (" +
                     llvm::toString(parsed.takeError()) + "): " +
                     lastLine(reply.take_front(300)));
  const llvm::json::Array *entries = parsed->getAsArray();
  if (const llvm::json::Object *object = parsed->getAsObject())
    entries = object->getArray("proposals");
  if (!entries)
    return makeError("the proposer's reply has no \"proposals\" array");

  std::vector<Schedule> accepted;
  llvm::StringSet<> ids;
  stats.proposed += entries->size();
  for (auto [index, entry] : llvm::enumerate(*entries)) {
    auto reject = [&](const llvm::Twine &why) {
      ++stats.rejected;
      stats.addMessage(("proposal #" + llvm::Twine(index) + ": " + why).str());
    };
    if (accepted.size() == count) {
      reject(llvm::formatv("more than the {0} asked for", count));
      continue;
    }
    llvm::Expected<Schedule> schedule =
        scheduleFromJSON(entry, task.getAnchor(), task.getTarget());
    if (!schedule) {
      reject(llvm::toString(schedule.takeError()));
      continue;
    }
    if (!task.withinLimits(*schedule)) {
      reject("outside the sketch's limits");
      continue;
    }
    std::string id = getScheduleId(*schedule);
    if (task.isMeasured(*schedule) || !ids.insert(id).second) {
      reject("measured already: " + id);
      continue;
    }
    accepted.push_back(std::move(*schedule));
  }
  stats.accepted += accepted.size();
  return accepted;
}

std::vector<Schedule> ke::askForProposals(Proposer &proposer,
                                          const SearchTask &task,
                                          unsigned count,
                                          ProposerStats &stats) {
  ++stats.calls;
  llvm::Expected<std::string> reply =
      proposer.ask(makeProposerRequest(task, count));
  llvm::Expected<std::vector<Schedule>> schedules =
      reply ? parseProposals(*reply, task, count, stats)
            : llvm::Expected<std::vector<Schedule>>(reply.takeError());
  if (!schedules) {
    ++stats.failedCalls;
    stats.addMessage(llvm::toString(schedules.takeError()));
    return {};
  }
  return std::move(*schedules);
}
