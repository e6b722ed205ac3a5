//===- Database.cpp - The tuning database (SQLite) ------------------------===//
//
// Schema and guarantees: docs/database.md. Every write is one transaction;
// every read that turns a row back into a TuningRecord goes through
// readRecord(), which refuses rows the writer would not have written, so a
// damaged or hand-edited row is a miss rather than a wrong schedule.
//
// Map of the Database component:
//   Database.cpp      TuningDatabase: open (WAL, schema version), add,
//                     getRecords, getBest, explainNoBest, list, JSONL
//                     export and import
//   Record.cpp        TuningRecord <-> JSON (one JSONL line)
//   RecordFormat.h    what a well-formed record is (shared by both ends)
//   Sqlite.cpp/.h     a thin RAII layer over the SQLite C API (statements,
//                     transactions, errors as llvm::Error)
// The database knows nothing of schedules: ke/TunedSchedules turns records
// into schedules and back.
//
//===----------------------------------------------------------------------===//

#include "ke/Database/Database.h"

#include "RecordFormat.h"
#include "Sqlite.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>
#include <unistd.h>

using namespace ke;
using ke::sqlite::Statement;
using ke::sqlite::Transaction;

namespace {

/// "keDB": marks the file as ke's, so another application's SQLite file is
/// told apart from an old or new ke schema.
constexpr int64_t kApplicationId = 0x6b654442;
/// Writers wait this long for each other (several tuning processes may
/// share one file) before a batch fails.
constexpr int kBusyTimeoutMs = 60000;

constexpr llvm::StringLiteral kSchema = R"sql(
CREATE TABLE workloads(
  key TEXT PRIMARY KEY NOT NULL,
  op TEXT NOT NULL,
  canonical_ir TEXT NOT NULL);
CREATE TABLE targets(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  driver TEXT NOT NULL,
  UNIQUE(name, device, driver));
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  workload TEXT NOT NULL REFERENCES workloads(key),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  ke_version TEXT NOT NULL,
  llvm_version TEXT NOT NULL,
  pipeline_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  sketch TEXT NOT NULL,
  knobs TEXT NOT NULL,
  script TEXT NOT NULL,
  seconds TEXT NOT NULL,
  median REAL,
  error TEXT NOT NULL,
  message TEXT NOT NULL,
  timestamp INTEGER NOT NULL);
CREATE INDEX records_by_workload_target ON records(workload, target_id);
)sql";

/// Features of records (TuningRecord::features), added to files of schema
/// version 1 when the first features are written: older ke ignores it.
constexpr llvm::StringLiteral kFeaturesSchema = R"sql(
CREATE TABLE IF NOT EXISTS record_features(
  record_id INTEGER PRIMARY KEY REFERENCES records(id),
  version TEXT NOT NULL,
  features TEXT NOT NULL);
)sql";

/// Features as text: numbers separated by spaces, "nan" where one does not
/// apply.
static std::string encodeFeatures(llvm::ArrayRef<float> features) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [index, value] : llvm::enumerate(features)) {
    if (index)
      os << ' ';
    if (std::isnan(value))
      os << "nan";
    else
      os << llvm::format("%.9g", value);
  }
  return text;
}

static std::optional<std::vector<float>>
decodeFeatures(llvm::StringRef text) {
  std::vector<float> features;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    if (part == "nan") {
      features.push_back(NAN);
      continue;
    }
    double value;
    if (part.getAsDouble(value))
      return std::nullopt;
    features.push_back(float(value));
  }
  return features;
}

/// The columns readRecord() reads, in its order; workload op and canonical
/// IR come last for the export.
constexpr llvm::StringLiteral kSelectRecords =
    "SELECT r.workload, t.name, t.device, t.driver, r.ke_version, "
    "r.llvm_version, r.pipeline_hash, r.role, r.sketch, r.knobs, r.script, "
    "r.seconds, r.median, r.error, r.message, r.timestamp, "
    "COALESCE(w.op, ''), COALESCE(w.canonical_ir, '') "
    "FROM records r JOIN targets t ON t.id = r.target_id "
    "LEFT JOIN workloads w ON w.key = r.workload ";

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The row under `row` (a kSelectRecords query) as a record, or
/// std::nullopt when some column does not hold what the writer writes.
std::optional<TuningRecord> readRecord(const Statement &row) {
  TuningRecord record;
  std::string *texts[] = {
      &record.workloadKey,  &record.target,    &record.device,
      &record.driver,       &record.keVersion, &record.llvmVersion,
      &record.pipelineHash, &record.role,      &record.sketch,
      &record.knobs,        &record.script};
  for (int column = 0; column < 11; ++column) {
    std::optional<std::string> text = row.text(column);
    if (!text)
      return std::nullopt;
    *texts[column] = std::move(*text);
  }
  std::optional<std::string> secondsText = row.text(11);
  if (!secondsText)
    return std::nullopt;
  std::optional<std::vector<double>> seconds =
      detail::decodeSeconds(*secondsText);
  if (!seconds)
    return std::nullopt;
  record.seconds = std::move(*seconds);
  if (row.isNull(12)) {
    record.medianSeconds = std::numeric_limits<double>::quiet_NaN();
  } else if (std::optional<double> median = row.real(12)) {
    record.medianSeconds = *median;
  } else {
    return std::nullopt;
  }
  std::optional<std::string> error = row.text(13), message = row.text(14);
  std::optional<int64_t> timestamp = row.integer(15);
  if (!error || !message || !timestamp)
    return std::nullopt;
  record.error = std::move(*error);
  record.message = std::move(*message);
  record.timestamp = *timestamp;
  if (llvm::Error invalid = detail::validateRecord(record)) {
    llvm::consumeError(std::move(invalid));
    return std::nullopt;
  }
  return record;
}

bool isInMemory(llvm::StringRef path) {
  return path.empty() || path == ":memory:";
}

} // namespace

struct TuningDatabase::Impl {
  sqlite3 *db = nullptr;
  std::string path;
  /// The process that opened the connection (see ~TuningDatabase).
  pid_t owner = 0;

  Statement statement() const { return Statement(db, path); }
  llvm::Error exec(llvm::StringRef sql) const {
    return sqlite::exec(db, path, sql);
  }
  /// Runs a single-value query and returns the value as an integer.
  llvm::Expected<int64_t> queryInteger(llvm::StringRef sql) const;
  /// Turns on WAL (persistent in the file) and checks that it took.
  llvm::Error enableWAL() const;
  /// Creates the schema when the file is empty; checks it is ke's otherwise.
  llvm::Error initialize(bool create) const;
  /// Inserts records inside an open transaction. With `skipDuplicates`, a
  /// record equal in every column to a stored one is counted, not added.
  llvm::Error insertRecords(llvm::ArrayRef<TuningRecord> records,
                            bool skipDuplicates, uint64_t &added,
                            uint64_t &duplicates) const;
  /// Inserts a workload row, or fills in a placeholder row (empty op and IR,
  /// made when records arrived before their workload).
  llvm::Error upsertWorkload(const WorkloadEntry &workload) const;
  /// Writes every readable record as a JSONL line, oldest first.
  llvm::Error exportRows(llvm::raw_ostream &os, uint64_t *skipped) const;
};

llvm::Expected<int64_t>
TuningDatabase::Impl::queryInteger(llvm::StringRef sql) const {
  Statement query = statement();
  if (llvm::Error error = query.prepare(sql))
    return std::move(error);
  llvm::Expected<bool> row = query.step();
  if (!row)
    return row.takeError();
  std::optional<int64_t> value = *row ? query.integer(0) : std::nullopt;
  if (!value)
    return fail(path + ": unexpected answer to '" + sql + "'");
  return *value;
}

llvm::Error TuningDatabase::Impl::enableWAL() const {
  Statement pragma = statement();
  if (llvm::Error error = pragma.prepare("PRAGMA journal_mode=WAL"))
    return error;
  llvm::Expected<bool> row = pragma.step();
  if (!row)
    return row.takeError();
  std::string mode = *row ? pragma.text(0).value_or("") : "";
  if (mode == "wal" || (mode == "memory" && isInMemory(path)))
    return llvm::Error::success();
  return fail(path +
              ": cannot put the tuning database in WAL journal mode "
              "(the file system may not support it); journal mode is '" +
              mode + "'");
}

llvm::Error TuningDatabase::Impl::initialize(bool create) const {
  // The first read of the file is where SQLite finds out it is not a
  // database at all.
  auto readHeader = [&](int64_t &applicationId, int64_t &version,
                        int64_t &objects) -> llvm::Error {
    llvm::Expected<int64_t> id = queryInteger("PRAGMA application_id");
    if (!id) {
      if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB) {
        llvm::consumeError(id.takeError());
        return fail(path + ": not a ke tuning database (not an SQLite file)");
      }
      return id.takeError();
    }
    applicationId = *id;
    llvm::Expected<int64_t> userVersion = queryInteger("PRAGMA user_version");
    if (!userVersion)
      return userVersion.takeError();
    version = *userVersion;
    llvm::Expected<int64_t> count =
        queryInteger("SELECT count(*) FROM sqlite_schema");
    if (!count)
      return count.takeError();
    objects = *count;
    return llvm::Error::success();
  };

  int64_t applicationId = 0, version = 0, objects = 0;
  if (llvm::Error error = readHeader(applicationId, version, objects))
    return error;
  bool empty = applicationId == 0 && version == 0 && objects == 0;
  if (empty) {
    if (!create)
      return fail(path + ": not a ke tuning database (an empty file)");
    // The journal mode cannot change inside a transaction.
    if (llvm::Error error = enableWAL())
      return error;
    // Another process may be creating the schema at the same moment: decide
    // again under the write lock.
    Transaction transaction(db, path);
    if (llvm::Error error = transaction.begin())
      return error;
    if (llvm::Error error = readHeader(applicationId, version, objects))
      return error;
    if (applicationId == 0 && version == 0 && objects == 0) {
      if (llvm::Error error = exec(kSchema))
        return error;
      if (llvm::Error error =
              exec(llvm::formatv(
                       "PRAGMA application_id={0}; PRAGMA user_version={1};",
                       kApplicationId, kSchemaVersion)
                       .str()))
        return error;
      applicationId = kApplicationId;
      version = kSchemaVersion;
    }
    if (llvm::Error error = transaction.commit())
      return error;
  }
  if (applicationId != kApplicationId)
    return fail(path + ": not a ke tuning database (an SQLite database of "
                       "another application)");
  if (version != kSchemaVersion)
    return fail(llvm::formatv("{0}: ke tuning database of schema version {1}; "
                              "this ke reads version {2} only",
                              path, version, kSchemaVersion));
  if (llvm::Error error = enableWAL())
    return error;
  // NORMAL, not FULL: in WAL mode a commit is written to the WAL file before
  // COMMIT returns, which survives the process being killed (the guarantee
  // tuning needs: kill -9 or a crash loses at most the batch in flight).
  // NORMAL skips the fsync per commit, so a power cut or OS crash can lose
  // the last batches, never corrupt the file. An fsync per batch would cost
  // more than many small candidates take to measure.
  return exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
}

llvm::Error
TuningDatabase::Impl::upsertWorkload(const WorkloadEntry &workload) const {
  if (workload.key.empty())
    return fail(path + ": a workload needs a key");
  Statement insert = statement();
  if (llvm::Error error = insert.prepare(
          "INSERT INTO workloads(key, op, canonical_ir) VALUES(?1, ?2, ?3) "
          "ON CONFLICT(key) DO UPDATE SET op = excluded.op, "
          "canonical_ir = excluded.canonical_ir "
          "WHERE workloads.op = '' AND workloads.canonical_ir = ''"))
    return error;
  insert.bind(1, workload.key);
  insert.bind(2, workload.opName);
  insert.bind(3, workload.canonicalIR);
  return insert.run();
}

llvm::Error
TuningDatabase::Impl::insertRecords(llvm::ArrayRef<TuningRecord> records,
                                    bool skipDuplicates, uint64_t &added,
                                    uint64_t &duplicates) const {
  Statement placeholder = statement(), insertTarget = statement(),
            findTarget = statement(), findRecord = statement(),
            insertRecord = statement();
  if (llvm::Error error = placeholder.prepare(
          "INSERT INTO workloads(key, op, canonical_ir) VALUES(?1, '', '') "
          "ON CONFLICT(key) DO NOTHING"))
    return error;
  if (llvm::Error error = insertTarget.prepare(
          "INSERT INTO targets(name, device, driver) VALUES(?1, ?2, ?3) "
          "ON CONFLICT DO NOTHING"))
    return error;
  if (llvm::Error error = findTarget.prepare(
          "SELECT id FROM targets WHERE name = ?1 AND device = ?2 AND "
          "driver = ?3"))
    return error;
  // The same columns in the same order in both statements, so one binding
  // routine serves both; `median IS ?13` also matches NULL with NULL.
  if (llvm::Error error = findRecord.prepare(
          "SELECT 1 FROM records WHERE workload = ?1 AND target_id = ?2 AND "
          "ke_version = ?3 AND llvm_version = ?4 AND pipeline_hash = ?5 AND "
          "role = ?6 AND sketch = ?7 AND knobs = ?8 AND script = ?9 AND "
          "seconds = ?10 AND error = ?11 AND message = ?12 AND median IS ?13 "
          "AND timestamp = ?14 LIMIT 1"))
    return error;
  if (llvm::Error error = insertRecord.prepare(
          "INSERT INTO records(workload, target_id, ke_version, llvm_version, "
          "pipeline_hash, role, sketch, knobs, script, seconds, error, "
          "message, median, timestamp) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, "
          "?8, ?9, ?10, ?11, ?12, ?13, ?14)"))
    return error;

  std::optional<Statement> insertFeatures;
  llvm::StringMap<int64_t> targetIds;
  for (const TuningRecord &record : records) {
    placeholder.reset();
    placeholder.bind(1, record.workloadKey);
    if (llvm::Error error = placeholder.run())
      return error;

    std::string targetKey =
        record.target + '\0' + record.device + '\0' + record.driver;
    auto [it, inserted] = targetIds.try_emplace(targetKey, 0);
    if (inserted) {
      for (Statement *target : {&insertTarget, &findTarget}) {
        target->reset();
        target->bind(1, record.target);
        target->bind(2, record.device);
        target->bind(3, record.driver);
      }
      if (llvm::Error error = insertTarget.run())
        return error;
      llvm::Expected<bool> row = findTarget.step();
      if (!row)
        return row.takeError();
      if (!*row)
        return fail(path + ": target row vanished during a transaction");
      it->second = findTarget.integer(0).value_or(0);
      findTarget.reset();
    }

    int64_t targetId = it->second;
    auto bindRecord = [&](Statement &statement) {
      statement.reset();
      statement.bind(1, record.workloadKey);
      statement.bind(2, targetId);
      statement.bind(3, record.keVersion);
      statement.bind(4, record.llvmVersion);
      statement.bind(5, record.pipelineHash);
      statement.bind(6, record.role);
      statement.bind(7, record.sketch);
      statement.bind(8, record.knobs);
      statement.bind(9, record.script);
      statement.bind(10, detail::encodeSeconds(record.seconds));
      statement.bind(11, record.error);
      statement.bind(12, record.message);
      // SQLite stores NaN as NULL anyway; infinity is stored as NULL too so
      // that every non-finite median reads back the same way (NaN).
      if (std::isfinite(record.medianSeconds))
        statement.bindDouble(13, record.medianSeconds);
      else
        statement.bindNull(13);
      statement.bind(14, record.timestamp);
    };
    if (skipDuplicates) {
      bindRecord(findRecord);
      llvm::Expected<bool> found = findRecord.step();
      if (!found)
        return found.takeError();
      findRecord.reset();
      if (*found) {
        ++duplicates;
        continue;
      }
    }
    bindRecord(insertRecord);
    if (llvm::Error error = insertRecord.run())
      return error;
    ++added;
    if (record.features.empty())
      continue;
    if (!insertFeatures) {
      if (llvm::Error error = exec(kFeaturesSchema))
        return error;
      insertFeatures.emplace(statement());
      if (llvm::Error error = insertFeatures->prepare(
              "INSERT INTO record_features(record_id, version, features) "
              "VALUES(?1, ?2, ?3)"))
        return error;
    }
    insertFeatures->reset();
    insertFeatures->bind(1, int64_t(sqlite3_last_insert_rowid(db)));
    insertFeatures->bind(2, record.featuresVersion);
    insertFeatures->bind(3, encodeFeatures(record.features));
    if (llvm::Error error = insertFeatures->run())
      return error;
  }
  return llvm::Error::success();
}

llvm::Error TuningDatabase::Impl::exportRows(llvm::raw_ostream &os,
                                             uint64_t *skipped) const {
  Statement query = statement();
  if (llvm::Error error =
          query.prepare((kSelectRecords + "ORDER BY r.id").str()))
    return error;
  while (true) {
    llvm::Expected<bool> row = query.step();
    if (!row)
      return row.takeError();
    if (!*row)
      return llvm::Error::success();
    std::optional<TuningRecord> record = readRecord(query);
    if (!record) {
      if (skipped)
        ++*skipped;
      continue;
    }
    llvm::json::Value line = record->toJSON();
    line.getAsObject()->insert({"op", query.text(16).value_or("")});
    line.getAsObject()->insert({"canonical_ir", query.text(17).value_or("")});
    os << line << '\n';
  }
}

llvm::Expected<std::unique_ptr<TuningDatabase>>
TuningDatabase::open(llvm::StringRef path) {
  return openImpl(path, /*create=*/true);
}

llvm::Expected<std::unique_ptr<TuningDatabase>>
TuningDatabase::openExisting(llvm::StringRef path) {
  if (!isInMemory(path) && !llvm::sys::fs::exists(path))
    return fail(path + ": no such tuning database");
  return openImpl(path, /*create=*/false);
}

llvm::Expected<std::unique_ptr<TuningDatabase>>
TuningDatabase::openImpl(llvm::StringRef path, bool create) {
  std::unique_ptr<TuningDatabase> database(new TuningDatabase());
  database->impl = std::make_unique<Impl>();
  Impl &impl = *database->impl;
  impl.path = isInMemory(path) ? ":memory:" : path.str();
  impl.owner = getpid();
  if (!isInMemory(path) && llvm::sys::fs::is_directory(path))
    return fail(path + ": is a directory, not a tuning database");
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(impl.path.c_str(), &impl.db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message =
        impl.db ? sqlite3_errmsg(impl.db) : sqlite3_errstr(rc);
    return fail(path + ": cannot open tuning database: " + message);
  }
  sqlite3_extended_result_codes(impl.db, 1);
  sqlite3_busy_timeout(impl.db, kBusyTimeoutMs);
  if (llvm::Error error = impl.initialize(create))
    return std::move(error);
  return database;
}

TuningDatabase::~TuningDatabase() {
  if (!impl || !impl->db)
    return;
  // In a forked child the connection is the parent's: leak it.
  if (getpid() == impl->owner)
    sqlite3_close_v2(impl->db);
}

llvm::Error TuningDatabase::addWorkload(const WorkloadEntry &workload) {
  return impl->upsertWorkload(workload);
}

llvm::Error TuningDatabase::addRecords(llvm::ArrayRef<TuningRecord> records) {
  for (auto [index, record] : llvm::enumerate(records))
    if (llvm::Error error = detail::validateRecord(record))
      return fail(llvm::formatv("{0}: record {1} of the batch (workload '{2}'):"
                                " {3}",
                                impl->path, index, record.workloadKey,
                                llvm::toString(std::move(error))));
  if (records.empty())
    return llvm::Error::success();
  Transaction transaction(impl->db, impl->path);
  if (llvm::Error error = transaction.begin())
    return error;
  uint64_t added = 0, duplicates = 0;
  if (llvm::Error error = impl->insertRecords(records, /*skipDuplicates=*/false,
                                              added, duplicates))
    return error;
  return transaction.commit();
}

llvm::Expected<std::vector<TuningRecord>>
TuningDatabase::getRecords(llvm::StringRef workloadKey,
                           llvm::StringRef target) {
  Statement query = impl->statement();
  if (llvm::Error error = query.prepare(
          (kSelectRecords + "WHERE r.workload = ?1 AND t.name = ?2 "
                            "ORDER BY r.id")
              .str()))
    return std::move(error);
  query.bind(1, workloadKey);
  query.bind(2, target);
  std::vector<TuningRecord> records;
  while (true) {
    llvm::Expected<bool> row = query.step();
    if (!row)
      return row.takeError();
    if (!*row)
      return records;
    if (std::optional<TuningRecord> record = readRecord(query))
      records.push_back(std::move(*record));
  }
}

llvm::Expected<std::vector<TuningDatabase::TransferSample>>
TuningDatabase::getTransferSamples(llvm::StringRef target,
                                   llvm::StringRef featuresVersion,
                                   llvm::StringRef excludedWorkload,
                                   unsigned limit) {
  std::vector<TransferSample> samples;
  llvm::Expected<int64_t> tables = impl->queryInteger(
      "SELECT count(*) FROM sqlite_schema WHERE name = 'record_features'");
  if (!tables)
    return tables.takeError();
  if (!*tables || !limit)
    return samples;
  Statement query = impl->statement();
  if (llvm::Error error = query.prepare(
          "SELECT r.workload, r.error, r.median, f.features FROM records r "
          "JOIN record_features f ON f.record_id = r.id "
          "JOIN targets t ON t.id = r.target_id "
          "WHERE t.name = ?1 AND f.version = ?2 AND r.role = 'trial' "
          "AND r.workload != ?4 ORDER BY r.id DESC LIMIT ?3"))
    return std::move(error);
  query.bind(1, target);
  query.bind(2, featuresVersion);
  query.bind(3, int64_t(limit));
  query.bind(4, excludedWorkload);
  while (true) {
    llvm::Expected<bool> row = query.step();
    if (!row)
      return row.takeError();
    if (!*row)
      return samples;
    std::optional<std::string> key = query.text(0), error = query.text(1),
                               text = query.text(3);
    std::optional<std::vector<float>> features =
        text ? decodeFeatures(*text) : std::nullopt;
    if (!key || !error || !features)
      continue; // unreadable: left out
    TransferSample sample{*key, std::move(*features), std::nullopt};
    std::optional<double> median = query.real(2);
    if (*error == "none" && median && *median > 0)
      sample.seconds = median;
    samples.push_back(std::move(sample));
  }
}

llvm::Expected<std::optional<TuningRecord>>
TuningDatabase::getBest(llvm::StringRef workloadKey, llvm::StringRef target,
                        llvm::StringRef pipelineHash) {
  // The newest final record and what was measured after it, fastest first,
  // oldest first among equal times; the first row that reads back is the
  // answer. A final record is a decision made by re-timing the fastest
  // trials side by side: the trials before it, whose lower medians may be
  // luck, do not overrule it.
  Statement query = impl->statement();
  if (llvm::Error error = query.prepare(
          (kSelectRecords +
           "WHERE r.workload = ?1 AND t.name = ?2 AND r.error = 'none' AND "
           "r.role IN ('trial', 'untuned', 'final') AND r.median > 0 AND "
           "(?3 = '' OR r.pipeline_hash = ?3) AND r.id >= "
           "(SELECT COALESCE(MAX(f.id), 0) FROM records f JOIN targets ft ON "
           "ft.id = f.target_id WHERE f.workload = ?1 AND ft.name = ?2 AND "
           "f.role = 'final' AND f.error = 'none' AND f.median > 0 AND "
           "(?3 = '' OR f.pipeline_hash = ?3)) ORDER BY r.median, r.id")
              .str()))
    return std::move(error);
  query.bind(1, workloadKey);
  query.bind(2, target);
  query.bind(3, pipelineHash);
  while (true) {
    llvm::Expected<bool> row = query.step();
    if (!row)
      return row.takeError();
    if (!*row)
      return std::nullopt;
    if (std::optional<TuningRecord> record = readRecord(query))
      return record;
  }
}

llvm::Expected<std::string>
TuningDatabase::explainNoBest(llvm::StringRef workloadKey,
                              llvm::StringRef target,
                              llvm::StringRef pipelineHash) {
  llvm::Expected<std::optional<TuningRecord>> any =
      getBest(workloadKey, target, /*pipelineHash=*/"");
  if (!any)
    return any.takeError();
  if (!*any)
    return ("no tuned record for workload " + workloadKey).str();
  return ("the tuned records for workload " + workloadKey +
          " are stale: made under pipeline hash " + (*any)->pipelineHash +
          ", not this ke's " + pipelineHash +
          " (the lowering changed since they were measured); tune again")
      .str();
}

llvm::Expected<std::vector<TuningDatabase::Summary>> TuningDatabase::list() {
  Statement query = impl->statement();
  if (llvm::Error error = query.prepare(
          "SELECT r.workload, COALESCE(w.op, ''), t.name, count(*), "
          "sum(r.error = 'none'), min(CASE WHEN r.error = 'none' AND "
          "r.role IN ('trial', 'untuned', 'final') AND r.median > 0 AND "
          // As getBest (any pipeline hash): the newest final record and
          // the trials after it.
          "r.id >= (SELECT COALESCE(MAX(f.id), 0) FROM records f JOIN "
          "targets ft ON ft.id = f.target_id WHERE f.workload = r.workload "
          "AND ft.name = t.name AND f.role = 'final' AND f.error = 'none' "
          "AND f.median > 0) THEN r.median END) "
          "FROM records r JOIN targets t ON t.id = r.target_id "
          "LEFT JOIN workloads w ON w.key = r.workload "
          "GROUP BY r.workload, t.name ORDER BY r.workload, t.name"))
    return std::move(error);
  std::vector<Summary> summaries;
  while (true) {
    llvm::Expected<bool> row = query.step();
    if (!row)
      return row.takeError();
    if (!*row)
      return summaries;
    Summary summary;
    summary.workloadKey = query.text(0).value_or("");
    summary.opName = query.text(1).value_or("");
    summary.target = query.text(2).value_or("");
    summary.records = query.integer(3).value_or(0);
    summary.valid = query.integer(4).value_or(0);
    summary.bestSeconds = query.real(5);
    summaries.push_back(std::move(summary));
  }
}

llvm::Error TuningDatabase::exportJSONL(llvm::raw_ostream &os) {
  uint64_t skipped = 0;
  return exportJSONL(os, &skipped);
}

llvm::Error TuningDatabase::exportJSONL(llvm::raw_ostream &os,
                                        uint64_t *skipped) {
  // One read transaction, so a writer committing meanwhile cannot make the
  // export a mix of two states.
  if (llvm::Error error = impl->exec("BEGIN"))
    return error;
  llvm::Error result = impl->exportRows(os, skipped);
  llvm::Error end = impl->exec("COMMIT");
  if (result) {
    llvm::consumeError(std::move(end));
    return result;
  }
  return end;
}

llvm::Expected<uint64_t> TuningDatabase::importJSONL(llvm::StringRef text) {
  uint64_t duplicates = 0;
  return importJSONL(text, &duplicates);
}

llvm::Expected<uint64_t> TuningDatabase::importJSONL(llvm::StringRef text,
                                                     uint64_t *duplicates) {
  // Parse everything first: a malformed line must leave the database as it
  // was, and must not hold the write lock while it is found.
  std::vector<TuningRecord> records;
  std::vector<WorkloadEntry> workloads;
  llvm::StringMap<bool> seenWorkloads;
  unsigned lineNumber = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    ++lineNumber;
    line = line.rtrim('\r');
    if (line.trim().empty())
      continue;
    auto lineError = [&](llvm::Error error) {
      return fail(llvm::formatv("line {0}: {1}", lineNumber,
                                llvm::toString(std::move(error))));
    };
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(line);
    if (!value)
      return lineError(value.takeError());
    llvm::json::Object *object = value->getAsObject();
    if (!object)
      return lineError(fail("expected a JSON object"));
    // The workload's op and canonical IR ride along on every line (so a
    // line stands alone); they are optional on import.
    WorkloadEntry workload;
    for (auto [field, out] :
         {std::pair{"op", &workload.opName},
          std::pair{"canonical_ir", &workload.canonicalIR}}) {
      if (const llvm::json::Value *entry = object->get(field)) {
        std::optional<llvm::StringRef> string = entry->getAsString();
        if (!string)
          return lineError(
              fail(llvm::Twine("field '") + field + "' is not a string"));
        *out = string->str();
        object->erase(field);
      }
    }
    llvm::Expected<TuningRecord> record = TuningRecord::fromJSON(*value);
    if (!record)
      return lineError(record.takeError());
    workload.key = record->workloadKey;
    if ((!workload.opName.empty() || !workload.canonicalIR.empty()) &&
        seenWorkloads.try_emplace(workload.key, true).second)
      workloads.push_back(std::move(workload));
    records.push_back(std::move(*record));
  }

  Transaction transaction(impl->db, impl->path);
  if (llvm::Error error = transaction.begin())
    return std::move(error);
  for (const WorkloadEntry &workload : workloads)
    if (llvm::Error error = impl->upsertWorkload(workload))
      return std::move(error);
  uint64_t added = 0, skipped = 0;
  if (llvm::Error error =
          impl->insertRecords(records, /*skipDuplicates=*/true, added, skipped))
    return std::move(error);
  if (llvm::Error error = transaction.commit())
    return std::move(error);
  if (duplicates)
    *duplicates = skipped;
  return added;
}
