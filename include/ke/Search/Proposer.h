//===- Proposer.h - Schedules proposed from outside the search --*- C++ -*-===//
//
// The optional extra mutation operator of the design (docs/tuning.md,
// Proposals from outside): a language model, or any program, proposes knob
// assignments for the workload being tuned. Each exploration round asks it
// for a few; what it proposes is checked like user input (the sketch exists
// and applies, every knob has one of its values, the schedule is within the
// rule's limits and not measured yet) and the valid ones are measured like
// any other candidate, with their records marked "proposed". A proposer
// that cannot be reached, fails or answers garbage is counted and noted,
// never the end of the run.
//
// Two ways to reach one:
//   - a command (`--proposer-cmd`), run by /bin/sh with the request as JSON
//     on stdin, its proposals as JSON on stdout;
//   - an OpenAI-compatible chat completions endpoint (`--proposer-url`,
//     `--proposer-model`), through curl; the request is the user message,
//     the reply's message content holds the proposals.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_PROPOSER_H
#define KE_SEARCH_PROPOSER_H

#include "ke/Search/SearchTask.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace ke {

struct ProposerOptions {
  /// A shell command: the request on stdin, the proposals on stdout.
  std::string command;
  /// An OpenAI-compatible chat completions URL (http or https).
  std::string url;
  /// The model the endpoint is asked for.
  std::string model;
  /// Proposals asked for in each exploration round.
  unsigned perRound = 8;
  /// Seconds before a call is abandoned.
  double timeoutSeconds = 60;

  bool isEnabled() const { return !command.empty() || !url.empty(); }
};

/// What the proposer did in a run: the tune summary's "proposer".
struct ProposerStats {
  unsigned calls = 0;
  /// Calls that failed: unreachable, timed out, a non-zero exit, a reply
  /// that is not the expected JSON.
  unsigned failedCalls = 0;
  /// Proposals received, of them measured and rejected (invalid, outside
  /// the limits, measured before, or repeated).
  unsigned proposed = 0, accepted = 0, rejected = 0;
  /// The first few reasons, for the summary.
  std::vector<std::string> messages;

  void addMessage(std::string message);
  llvm::json::Value toJSON() const;
};

/// Sends a request to the proposer and returns its raw reply.
class Proposer {
public:
  virtual ~Proposer();
  /// The proposals text the proposer answered to `request` (for an
  /// endpoint: the reply's message content), or why there is none.
  virtual llvm::Expected<std::string>
  ask(const llvm::json::Value &request) = 0;
};

/// The proposer `options` describe (a command if both are given), or null
/// when neither is.
std::unique_ptr<Proposer> createProposer(const ProposerOptions &options);

/// The request for `count` proposals for `task`'s workload: its op (and IR),
/// the target, every sketch with its knobs and their values, and the best
/// valid schedules measured so far with their times.
llvm::json::Value makeProposerRequest(const SearchTask &task, unsigned count);

/// The schedules of `task` in a proposer's reply: a JSON object with
/// "proposals" or a bare array of {"sketch", "knobs"} (inside a Markdown
/// code fence or not). Invalid entries, ones outside the limits, measured
/// before or repeated, and entries past `count` are rejected and counted in
/// `stats`; a reply that is not such JSON is an error.
llvm::Expected<std::vector<Schedule>>
parseProposals(llvm::StringRef reply, const SearchTask &task, unsigned count,
               ProposerStats &stats);

/// Asks `proposer` for `count` schedules of `task` and parses the reply;
/// every failure is counted in `stats` and gives no schedules.
std::vector<Schedule> askForProposals(Proposer &proposer,
                                      const SearchTask &task, unsigned count,
                                      ProposerStats &stats);

} // namespace ke

#endif // KE_SEARCH_PROPOSER_H
