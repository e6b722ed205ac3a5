"""Read-only access to a ke tuning database (docs/database.md).

The database is SQLite: Python's sqlite3 opens it read-only (mode=ro), so
nothing here can change or create it, and no ke binary is needed.
"""

import json
import sqlite3
from pathlib import Path

from ke._errors import KeError

_APPLICATION_ID = 0x6B654442  # "keDB"


class Database:
    """A ke tuning database opened read-only.

    `workloads()` lists the tuned workloads, `records(...)` the measured
    candidates, `best(...)` the fastest valid record per workload and
    target (what `ke-opt db list` and `db best` print)."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_file():
            raise KeError("no ke database at '%s'" % self.path)
        try:
            self._db = sqlite3.connect("file:%s?mode=ro" % self.path.resolve(),
                                       uri=True)
            application = self._db.execute("PRAGMA application_id").fetchone()
        except sqlite3.DatabaseError as error:
            raise KeError("'%s' is not a ke database: %s" %
                          (self.path, error)) from error
        if application[0] != _APPLICATION_ID:
            raise KeError("'%s' is not a ke database (SQLite application id "
                          "%#x)" % (self.path, application[0]))
        self._db.row_factory = sqlite3.Row

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def workloads(self):
        """[{key, op, records, valid, best_seconds}] per workload."""
        rows = self._db.execute(
            "SELECT w.key, w.op, COUNT(r.id) AS records, "
            "SUM(r.error = 'none') AS valid, "
            # As ke's getBest: the newest final record (the search's
            # finalists re-timed side by side) and the trials after it.
            "MIN(CASE WHEN r.error = 'none' AND r.median > 0 AND "
            "r.role IN ('trial', 'untuned', 'final') AND r.id >= "
            "(SELECT COALESCE(MAX(f.id), 0) FROM records f WHERE "
            "f.workload = r.workload AND f.target_id = r.target_id AND "
            "f.role = 'final' AND f.error = 'none' AND f.median > 0) "
            "THEN r.median END) AS best_seconds "
            "FROM workloads w LEFT JOIN records r ON r.workload = w.key "
            "GROUP BY w.key ORDER BY w.key")
        return [{"key": r["key"], "op": r["op"], "records": r["records"],
                 "valid": r["valid"] or 0, "best_seconds": r["best_seconds"]}
                for r in rows]

    def records(self, workload=None, target=None, valid_only=False):
        """Records (dicts with knobs and seconds parsed), oldest first."""
        query = ("SELECT r.*, t.name AS target, t.device AS device, w.op AS op "
                 "FROM records r JOIN targets t ON t.id = r.target_id "
                 "LEFT JOIN workloads w ON w.key = r.workload WHERE 1=1")
        params = []
        if workload:
            query += " AND r.workload = ?"
            params.append(workload)
        if target:
            query += " AND t.name = ?"
            params.append(target)
        if valid_only:
            query += " AND r.error = 'none'"
        query += " ORDER BY r.id"
        return [self._record(row) for row in self._db.execute(query, params)]

    def best(self, target=None):
        """The record ke compiles for each workload and target (any
        pipeline hash), as records(), ordered by workload: the fastest of
        the newest final record (the search's finalists re-timed side by
        side) and the trial and untuned records after it."""
        best = {}
        for record in self.records(target=target, valid_only=True):
            if (record["role"] not in ("trial", "untuned", "final") or
                    not record["median"]):
                continue
            key = (record["workload"], record["target"])
            # Records come oldest first: a final record overrules the ones
            # before it.
            if (key not in best or record["role"] == "final" or
                    record["median"] < best[key]["median"]):
                best[key] = record
        return [best[key] for key in sorted(best)]

    @staticmethod
    def _record(row):
        record = dict(row)
        for field in ("knobs", "seconds"):
            if record.get(field):
                try:
                    record[field] = json.loads(record[field])
                except ValueError:
                    pass
        record.pop("target_id", None)
        return record
