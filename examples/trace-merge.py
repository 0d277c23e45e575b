#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Merge Chrome trace-event files onto one timeline.

    trace-merge.py FILE.json... > merged.json

Takes the JSON of `tnfctl-follow --format=json` (process slices) and of
`tnfdump --format=json` (probe events) of the same run, and writes one
trace the Perfetto UI opens, with the probe events on the tracks of the
processes that fired them.  Both tools give "ts" in microseconds from their
own start, and their otherData.ts_base_ns names that start on one clock
(CLOCK_MONOTONIC): every event is moved onto the earliest base.  Where both
name a process or a thread, tnfctl-follow's name (the program) is kept over
tnfdump's ("pid N").
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    other = trace.get("otherData", {})
    if "ts_base_ns" not in other:
        sys.exit("trace-merge: %s has no otherData.ts_base_ns (not from tnfctl-follow "
                 "--format=json or tnfdump --format=json)" % path)
    return trace, int(other["ts_base_ns"]), other.get("source", "")


def main(paths):
    if not paths:
        sys.exit("usage: trace-merge.py FILE.json...")
    traces = [load(p) for p in paths]
    base = min(b for _, b, _ in traces)
    names = {}  # (name, pid, tid) -> (is tnfctl-follow's, event)
    events = []
    for trace, b, source in traces:
        shift = (b - base) / 1000.0
        for e in trace["traceEvents"]:
            if e.get("ph") == "M" and e.get("name") in ("process_name", "thread_name"):
                tid = e.get("tid") if e["name"] == "thread_name" else None
                key = (e["name"], e.get("pid"), tid)
                mine = source == "tnfctl-follow"
                if key not in names or (mine and not names[key][0]):
                    names[key] = (mine, e)
                continue
            if "ts" in e:
                e = dict(e, ts=round(e["ts"] + shift, 3))
            events.append(e)
    merged = [e for _, e in names.values()] + sorted(events, key=lambda e: e.get("ts", -1))
    json.dump({"traceEvents": merged, "displayTimeUnit": "ms",
               "otherData": {"source": "trace-merge.py", "ts_base_ns": base,
                             "files": paths}}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
