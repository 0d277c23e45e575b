#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks tnfctl-follow's output against the process trees test_follow.c runs.

    follow_json_check.py tree FILE.json   the tree of test_follow_json_tree
    follow_json_check.py ndjson FILE      every line one JSON event object
    follow_json_check.py merged FILE.json tnfctl-follow's and tnfdump's JSON of
                                          one run of tnfdemo, merged by
                                          examples/trace-merge.py

Prints what is wrong and exits 1, or exits 0.
"""
import json
import sys


def fail(msg, data=None):
    print("follow_json_check: " + msg, file=sys.stderr)
    if data is not None:
        json.dump(data, sys.stderr, indent=1)
        print(file=sys.stderr)
    sys.exit(1)


def load_trace(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    slices, instants, meta = {}, [], {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault(e["pid"], []).append(e)
        elif e["ph"] == "i":
            instants.append(e)
        elif e["ph"] == "M":
            meta.setdefault(e["pid"], {})[e["name"]] = e["args"]
        else:
            fail("unexpected phase " + e["ph"], e)
    for pid, s in slices.items():
        s.sort(key=lambda e: e["ts"])
        for a, b in zip(s, s[1:]):
            if a["args"]["end"] != "exec":
                fail("pid %d: an image after one that did not exec" % pid, s)
            if abs(a["ts"] + a["dur"] - b["ts"]) > 0.002:
                fail("pid %d: its images do not follow each other" % pid, s)
        if s[-1]["args"]["end"] == "exec":
            fail("pid %d: its last image ends by an exec" % pid, s)
        m = meta.get(pid, {})
        if m.get("process_name", {}).get("name") != s[-1]["name"]:
            fail("pid %d: process_name is not its last image's name" % pid, [s, m])
        if "sort_index" not in m.get("process_sort_index", {}):
            fail("pid %d: no process_sort_index" % pid, m)
    return slices, instants, meta


def end_of(s):
    return s[-1]["ts"] + s[-1]["dur"]


def images(s):
    return [e["name"] for e in s]


def check_tree(path):
    slices, instants, meta = load_trace(path)
    roots = [p for p, s in slices.items() if s[-1]["args"].get("status") == 5]
    if len(roots) != 1:
        fail("not one process ending with status 5 (the root)", slices)
    root = roots[0]
    rs = slices[root]
    if images(rs) != ["sh"] or rs[0]["ts"] > min(s[0]["ts"] for s in slices.values()):
        fail("the root is not one sh image from the start", rs)
    kids = {p: s for p, s in slices.items() if s[0]["args"].get("ppid") == root}

    def child_with(imgs, **end):
        for p, s in kids.items():
            if images(s) == imgs and all(s[-1]["args"].get(k) == v for k, v in end.items()):
                return p, s
        fail("no child of the root with images %s ending %s" % (imgs, end), slices)

    # 3 levels: root -> sh -c '/bin/true; exit 4' -> /bin/true, each inside its parent
    c1, s1 = child_with(["sh", "sh"], end="exit", status=4)
    if s1[1]["args"]["argv"] != ["/bin/sh", "-c", "/bin/true; exit 4"]:
        fail("the level-2 sh has not its argv", s1)
    c2 = [p for p, s in slices.items() if s[0]["args"].get("ppid") == c1]
    if len(c2) != 1 or images(slices[c2[0]]) != ["sh", "true"]:
        fail("the level-2 sh has not one child that execs true", slices)
    s2 = slices[c2[0]]
    if s2[-1]["args"]["end"] != "exit" or s2[-1]["args"]["status"] != 0:
        fail("/bin/true did not exit 0", s2)
    if s2[-1]["args"]["argv"] != ["/bin/true"] or s2[-1]["args"]["path"] != "/bin/true":
        fail("/bin/true's argv or path", s2)
    for inner, outer in ((s2, s1), (s1, rs)):
        if inner[0]["ts"] < outer[0]["ts"] or end_of(inner) > end_of(outer):
            fail("a waited-for child's slices are not inside its parent's", [inner, outer])
    # an exec chain in one process: (exec env /bin/true)
    child_with(["sh", "env", "true"], end="exit", status=0)
    # a failed exec: an instant, then the shell's exit 127
    fp, fs = child_with(["sh"], end="exit", status=127)
    fails = [i for i in instants if i["pid"] == fp and i["cat"] == "EXECFAIL"]
    if len(fails) != 1 or fails[0]["args"]["path"] != "/nonexistent/prog" or \
            fails[0]["args"]["error"] != "ENOENT":
        fail("no one EXECFAIL instant of /nonexistent/prog (ENOENT) in pid %d" % fp, instants)
    if not fs[0]["ts"] <= fails[0]["ts"] <= end_of(fs):
        fail("the EXECFAIL instant is not inside its process's slice", [fs, fails])
    # killed by a signal
    kp, ks = child_with(["sh", "sh"], end="signal", signal=9, signame="SIGKILL")
    if ks[-1]["args"]["argv"] != ["/bin/sh", "-c", "kill -9 $$"]:
        fail("the killed sh has not its argv", ks)
    # a process that outlives its parent: the subshell blocked on the fifo
    pp, ps = child_with(["sh", "sh"], end="exit", status=0)
    orphans = [p for p, s in slices.items() if s[0]["args"].get("ppid") == pp]
    if len(orphans) != 1:
        fail("the sh that exits at once has not one child", slices)
    os_ = slices[orphans[0]]
    if end_of(os_) <= end_of(ps):
        fail("the orphan did not outlive its parent", [os_, ps])
    # parents above children
    for p, s in slices.items():
        parent = s[0]["args"].get("ppid")
        if parent in meta and meta[parent]["process_sort_index"]["sort_index"] >= \
                meta[p]["process_sort_index"]["sort_index"]:
            fail("pid %d sorts before its parent %d" % (p, parent), meta)
    # argv, cwd and path of every exec'd image
    for p, s in slices.items():
        for e in s[1:]:
            if not e["args"].get("cwd", "").startswith("/") or "path" not in e["args"]:
                fail("pid %d: an exec'd image without cwd or path" % p, e)


def check_ndjson(path):
    need = {"time_ns", "ms", "event", "pid"}
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("{"):
                continue  # the traced shell's own output
            e = json.loads(line)
            if not need <= e.keys():
                fail("an event without " + ", ".join(sorted(need - e.keys())), e)
            if n == 0 and (e["event"] != "ROOT" or "argv" not in e):
                fail("the first line is not the ROOT event with its argv", e)
            if e["event"] == "FORK" and "child" not in e:
                fail("a FORK without child", e)
            if e["event"] == "EXEC" and not ("argv" in e and "cwd" in e and "path" in e):
                fail("an EXEC without argv, cwd or path", e)
            if e["event"] == "EXIT" and "status" not in e:
                fail("an EXIT without status", e)
            n += 1
    if not n:
        fail("no event")


def check_merged(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    slices, probes, names = {}, [], {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault(e["pid"], []).append(e)
        elif e["ph"] == "i" and e["cat"] not in ("EXECFAIL", "DLOPEN", "DLCLOSE"):
            probes.append(e)
        elif e["ph"] == "M" and e["name"] == "process_name":
            if e["pid"] in names:
                fail("two process_name for pid %d" % e["pid"], e)
            names[e["pid"]] = e["args"]["name"]
    ts = [e["ts"] for e in events if "ts" in e]
    if ts != sorted(ts):
        fail("the merged events are not in time order")
    fired = {e["name"] for e in probes}
    for want in ("demo_start", "demo_step", "plugin_loaded", "demo_exit"):
        if want not in fired:
            fail("no %s probe event in the merged trace" % want, sorted(fired))
    for e in probes:
        s = slices.get(e["pid"])
        if not s:
            fail("a probe event on pid %d, which has no process slice" % e["pid"], e)
        # one clock: each probe fired while its process ran
        if not min(x["ts"] for x in s) <= e["ts"] <= max(x["ts"] + x["dur"] for x in s):
            fail("probe event outside its process's slices", [e, s])
        if names.get(e["pid"], "").startswith("pid "):
            fail("pid %d kept tnfdump's name over the program's" % e["pid"], names)


if __name__ == "__main__":
    checks = {"tree": check_tree, "ndjson": check_ndjson, "merged": check_merged}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        fail("usage: follow_json_check.py tree|ndjson|merged FILE")
    checks[sys.argv[1]](sys.argv[2])
