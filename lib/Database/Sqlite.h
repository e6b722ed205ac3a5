//===- Sqlite.h - Thin RAII helpers over the SQLite C API -------*- C++ -*-===//
//
// Internal to lib/Database: prepared statements that finalize themselves,
// transactions that roll back unless committed, and SQLite errors as
// llvm::Error with the database path in front.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_DATABASE_SQLITE_H
#define KE_LIB_DATABASE_SQLITE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ke::sqlite {

/// An error "<path>: <what>: <SQLite's message>" for the last failure on db.
llvm::Error makeError(sqlite3 *db, llvm::StringRef path, llvm::StringRef what);

/// A prepared statement. Bind failures are remembered and reported by the
/// next step(), so binding code stays linear.
class Statement {
public:
  Statement(sqlite3 *db, llvm::StringRef path) : db(db), path(path) {}
  Statement(Statement &&other);
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;
  ~Statement();

  /// Compiles `sql`; fails naming the path.
  llvm::Error prepare(llvm::StringRef sql);

  /// Parameters are 1-based, as in SQLite. Text is copied.
  void bind(int index, llvm::StringRef text);
  void bind(int index, int64_t value);
  void bindDouble(int index, double value);
  void bindNull(int index);

  /// One step: true when a row is available, false when done.
  llvm::Expected<bool> step();
  /// Steps a statement that returns no rows.
  llvm::Error run();
  /// Ready for new bindings and a new run.
  void reset();

  /// Column accessors (0-based). The optional ones are empty when the
  /// column does not hold the expected type (a row written by hand, or
  /// damaged), so the caller can treat the row as unreadable.
  std::optional<std::string> text(int column) const;
  std::optional<int64_t> integer(int column) const;
  /// A REAL or INTEGER column; NULL is std::nullopt as well.
  std::optional<double> real(int column) const;
  bool isNull(int column) const;

private:
  sqlite3 *db;
  std::string path;
  sqlite3_stmt *stmt = nullptr;
  int bindError = SQLITE_OK;
};

/// Runs SQL text (several statements allowed) that returns no rows.
llvm::Error exec(sqlite3 *db, llvm::StringRef path, llvm::StringRef sql);

/// A write transaction (BEGIN IMMEDIATE: the write lock is taken up front,
/// waiting up to the busy timeout, so a batch never fails half-way for
/// another writer). Rolls back when destroyed uncommitted.
class Transaction {
public:
  Transaction(sqlite3 *db, llvm::StringRef path) : db(db), path(path) {}
  ~Transaction();
  llvm::Error begin();
  llvm::Error commit();

private:
  sqlite3 *db;
  std::string path;
  bool open = false;
};

} // namespace ke::sqlite

#endif // KE_LIB_DATABASE_SQLITE_H
