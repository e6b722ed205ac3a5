//===- Sqlite.cpp - Thin RAII helpers over the SQLite C API ---------------===//

#include "Sqlite.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ke::sqlite;

llvm::Error ke::sqlite::makeError(sqlite3 *db, llvm::StringRef path,
                                  llvm::StringRef what) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("{0}: {1}: {2}", path, what, sqlite3_errmsg(db)));
}

Statement::Statement(Statement &&other)
    : db(other.db), path(std::move(other.path)), stmt(other.stmt),
      bindError(other.bindError) {
  other.stmt = nullptr;
}

Statement::~Statement() { sqlite3_finalize(stmt); }

llvm::Error Statement::prepare(llvm::StringRef sql) {
  sqlite3_finalize(stmt);
  stmt = nullptr;
  bindError = SQLITE_OK;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt,
                         nullptr) != SQLITE_OK)
    return makeError(db, path, "cannot read tuning database");
  return llvm::Error::success();
}

void Statement::bind(int index, llvm::StringRef text) {
  int rc = sqlite3_bind_text64(stmt, index, text.data(), text.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bindError == SQLITE_OK)
    bindError = rc;
}

void Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt, index, value);
  if (rc != SQLITE_OK && bindError == SQLITE_OK)
    bindError = rc;
}

void Statement::bindDouble(int index, double value) {
  int rc = sqlite3_bind_double(stmt, index, value);
  if (rc != SQLITE_OK && bindError == SQLITE_OK)
    bindError = rc;
}

void Statement::bindNull(int index) {
  int rc = sqlite3_bind_null(stmt, index);
  if (rc != SQLITE_OK && bindError == SQLITE_OK)
    bindError = rc;
}

llvm::Expected<bool> Statement::step() {
  if (bindError != SQLITE_OK)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: cannot write tuning database: {1}", path,
                      sqlite3_errstr(bindError)));
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  return makeError(db, path,
                   sqlite3_stmt_readonly(stmt)
                       ? "cannot read tuning database"
                       : "cannot write tuning database");
}

llvm::Error Statement::run() {
  llvm::Expected<bool> row = step();
  if (!row)
    return row.takeError();
  return llvm::Error::success();
}

void Statement::reset() {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  bindError = SQLITE_OK;
}

std::optional<std::string> Statement::text(int column) const {
  if (sqlite3_column_type(stmt, column) != SQLITE_TEXT)
    return std::nullopt;
  const unsigned char *data = sqlite3_column_text(stmt, column);
  int size = sqlite3_column_bytes(stmt, column);
  return std::string(reinterpret_cast<const char *>(data), size);
}

std::optional<int64_t> Statement::integer(int column) const {
  if (sqlite3_column_type(stmt, column) != SQLITE_INTEGER)
    return std::nullopt;
  return sqlite3_column_int64(stmt, column);
}

std::optional<double> Statement::real(int column) const {
  int type = sqlite3_column_type(stmt, column);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
    return std::nullopt;
  return sqlite3_column_double(stmt, column);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(stmt, column) == SQLITE_NULL;
}

llvm::Error ke::sqlite::exec(sqlite3 *db, llvm::StringRef path,
                             llvm::StringRef sql) {
  if (sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, nullptr) !=
      SQLITE_OK)
    return makeError(db, path, "cannot write tuning database");
  return llvm::Error::success();
}

Transaction::~Transaction() {
  if (open)
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
}

llvm::Error Transaction::begin() {
  if (llvm::Error error = exec(db, path, "BEGIN IMMEDIATE"))
    return error;
  open = true;
  return llvm::Error::success();
}

llvm::Error Transaction::commit() {
  if (llvm::Error error = exec(db, path, "COMMIT"))
    return error; // the destructor rolls back
  open = false;
  return llvm::Error::success();
}
