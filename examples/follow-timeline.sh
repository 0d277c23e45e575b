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
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        t = e["time_ns"]
        t0 = t if t0 is None else min(t0, t)
        p = procs.setdefault(e["pid"], [t, None, "pid %d" % e["pid"], False])
        if e["event"] == "FORK":
            procs[e["child"]] = [t, None, p[2], False]
        elif e["event"] in ("EXEC", "ROOT"):
            argv0 = e["argv"][0] if e.get("argv") else e.get("path", "")
            p[2] = os.path.basename(argv0) or argv0
        elif e["event"] in ("EXIT", "TARGGONE"):
            p[1] = t
            p[3] = e["event"] == "TARGGONE" or e.get("status", 0) != 0
if t0 is None:
    sys.exit("follow-timeline: no event in " + sys.argv[1])
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
