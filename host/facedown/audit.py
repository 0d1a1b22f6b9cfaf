"""The shoe's audit log, checked on the host: every record's hash is the SHA-256 of its text
before the hash (firmware/audit.py), and each names the hash of the record before it. A record
changed, inserted or removed on the way or in the shoe's flash breaks the chain."""

import hashlib
import json

ZERO = "0" * 64


def parse(lines):
    """(records, problems) from the log's lines as the shoe sent them: each record's hash is
    checked over the exact text it covers, then the chain from record to record."""
    problems = []
    records = []
    prev = None
    for line in lines:
        cut = line.rfind(', "hash": "')
        try:
            r = json.loads(line)
            n = r["n"]
        except (ValueError, KeyError, TypeError):
            problems.append("a record is unreadable: %r" % line[:60])
            prev = None
            continue
        if cut < 0 or hashlib.sha256(line[:cut].encode()).hexdigest() != r.get("hash"):
            problems.append("record %d was altered (its hash does not match)" % n)
        if prev is not None:
            if n != prev["n"] + 1:
                problems.append("records %d..%d are missing" % (prev["n"] + 1, n - 1))
            elif r.get("prev") != prev.get("hash"):
                problems.append("record %d does not follow record %d" % (n, prev["n"]))
        elif n == 1 and r.get("prev") != ZERO:
            problems.append("record 1 does not start the chain")
        records.append(r)
        prev = r
    return records, problems
