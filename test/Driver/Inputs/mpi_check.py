#!/usr/bin/env python3
"""Checks an MPI tuning run (test/Driver/tune-mpi.test): its summary, its
records file and its database agree.

Prints, for FileCheck:
  ranks N                      the summary's rank count, and "concurrent"
                               or "split" (its concurrent_rounds)
  trials T of W workloads      trial records in the records file
  database equals records      every record of the records file is in the
                               database with the same content, and nothing
                               else is (or "database differs: ...")
  measured by ranks 0 1 2      the ranks named in the records' measured_by
"""
import argparse
import collections
import json
import re
import subprocess
import sys


def content(record, schedule_sketch):
    """What must be equal on both sides: role, outcome, timings, sketch."""
    valid = record["error"] == "none"
    return (record["role"], record["error"], schedule_sketch,
            record["median_seconds"] if valid else None,
            tuple(record.get("seconds", [])) if valid else ())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ke-opt", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--records", required=True)
    parser.add_argument("--summary")
    args = parser.parse_args()

    if args.summary:
        summary = json.load(open(args.summary))
        mode = "concurrent" if summary.get("concurrent_rounds") else "split"
        print(f"ranks {summary.get('ranks')} {mode}")
    records = [json.loads(line) for line in open(args.records)]
    trials = [r for r in records if r["role"] == "trial"]
    print(f"trials {len(trials)} of {len(set(r['workload'] for r in trials))} workloads")

    exported = subprocess.run([args.ke_opt, "db", "export", "--db", args.db],
                              capture_output=True, text=True, check=True).stdout
    in_db = collections.Counter(
        content(r, r.get("sketch") or None)
        for r in map(json.loads, exported.splitlines()))
    in_file = collections.Counter(
        content(r, (r.get("schedule") or {}).get("sketch")) for r in records)
    if in_db == in_file:
        print("database equals records")
    else:
        print(f"database differs: {sum((in_file - in_db).values())} only in the "
              f"records file, {sum((in_db - in_file).values())} only in the database")

    ranks = sorted({int(re.match(r"rank (\d+) ", r["measured_by"]).group(1))
                    for r in records if "measured_by" in r})
    print("measured by ranks " + " ".join(map(str, ranks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
