#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# follow-timeline.sh EVENTS.ndjson OUT.png [TITLE]
#
# Draws the processes of a `tnfctl-follow --format=ndjson` run as a
# timeline: one bar per process from its fork to its exit, named by the
# last program it ran, on as few rows as the run's parallelism needs (a
# process takes the first row free when it starts); red when it exited
# non-zero or was killed.  Needs python3 and gnuplot (Debian: gnuplot-nox).
# Input that is not such a run (the --format=json trace, a line that is no
# event, a missing file) is said in one line, exit 1.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 EVENTS.ndjson OUT.png [TITLE]" >&2
	exit 2
fi
in=$1
out=$2
title=${3:-$(basename "$in")}
data=$(mktemp /tmp/follow-timeline-XXXXXX)
trap 'rm -f "$data"' EXIT

# One line per process: start_s row duration_s failed name
python3 - "$in" >"$data" <<'EOF'
import json
import os
import sys

procs = {}  # pid -> [start_ns, end_ns, name, failed]
t0 = None
path = sys.argv[1]


def bad(lineno, why):
    """One line naming the file and what is wrong with it; exit 1."""
    sys.exit("follow-timeline: %s, line %d: %s: not a `tnfctl-follow --format=ndjson` run"
             % (path, lineno, why))


try:
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            # the program's own output, when it went to the same stdout
            if not line.startswith("{"):
                continue
            try:
                e = json.loads(line)
            except ValueError as err:
                # --format=json: one JSON document, not an object per line
                if lineno == 1 and '"traceEvents"' in line:
                    sys.exit("follow-timeline: %s is a `tnfctl-follow --format=json` trace "
                             "(for Perfetto); this script draws a --format=ndjson run "
                             "(`tnfctl-follow --format=ndjson -o FILE -- CMD`)" % path)
                bad(lineno, "not a JSON object (%s)" % err.msg)
            if not isinstance(e, dict):
                bad(lineno, "not a JSON object")
            for key in ("time_ns", "pid", "event") + (("child",) if e.get("event") == "FORK" else ()):
                if not isinstance(e.get(key), str if key == "event" else int):
                    bad(lineno, "no valid \"%s\" in %s" % (key, line.strip()[:60]))
            t, pid, kind = e["time_ns"], e["pid"], e["event"]
            t0 = t if t0 is None else min(t0, t)
            p = procs.setdefault(pid, [t, None, "pid %d" % pid, False])
            if kind == "FORK":
                procs[e["child"]] = [t, None, p[2], False]
            elif kind in ("EXEC", "ROOT"):
                argv = e.get("argv")
                argv0 = str(argv[0]) if isinstance(argv, list) and argv else str(e.get("path", ""))
                p[2] = os.path.basename(argv0) or argv0
            elif kind in ("EXIT", "TARGGONE"):
                p[1] = t
                p[3] = kind == "TARGGONE" or e.get("status", 0) != 0
except OSError as err:
    sys.exit("follow-timeline: %s: %s" % (path, err.strerror))
if t0 is None:
    sys.exit("follow-timeline: no event in " + path)
end = max(max(p[0], p[1] or 0) for p in procs.values())
rows = []  # each row: the time it is free again
for start, stop, name, failed in sorted(procs.values(), key=lambda p: p[0]):
    stop = stop if stop is not None else end
    for row, free in enumerate(rows):
        if free <= start:
            break
    else:
        row = len(rows)
        rows.append(0)
    rows[row] = stop
    print("%.6f %d %.6f %d %s" % ((start - t0) / 1e9, row, (stop - start) / 1e9,
                                  1 if failed else 0, name.replace(" ", "_") or "?"))
EOF

rows=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m + 1 }' "$data")
procs=$(wc -l <"$data")
gnuplot <<EOF
set terminal pngcairo noenhanced size 1200,$((200 + rows * 22)) font "sans,9"
set output "$out"
set title "$title: $procs processes"
set xlabel "seconds"
set ylabel "processes running at once"
set yrange [-1:$rows]
set ytics 1
set grid xtics
unset key
set style textbox opaque noborder
plot "$data" using 1:2:3:(0):(\$4 > 0 ? 0xcc3333 : 0x3366cc) with vectors nohead lw 14 lc rgb variable, \
     "$data" using (\$1 + \$3 / 2):2:(\$3 > $(awk '{ if ($1 + $3 > m) m = $1 + $3 } END { print m / 25 }' "$data") ? stringcolumn(5) : "") \
	with labels font "sans,8" tc rgb "white"
EOF
echo "$out: $procs processes on $rows rows"
