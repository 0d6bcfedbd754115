"""client_check.py - the Python client against a real relish serve
(tests/test_python_client.sh starts it and passes where it is).

argv: SOCKET PORT TOKEN USER CTRIAL WORK RELISH
Each check prints "ok: ..."; the first failure raises (exit 1).
"""
import csv
import io
import math
import os
import subprocess
import sys

import relish

sock, port, token, user, ctrial, work, relish_bin = sys.argv[1:8]
checks = 0


def ok(msg):
    global checks
    checks += 1
    print("ok: " + msg, flush=True)


def spec(name, trials, epochs, sleep_ms, concurrent=2):
    return {
        "name": name,
        "objective": {"metric": "accuracy", "mode": "max"},
        "search": {"algorithm": "random", "seed": 3, "max_trials": trials,
                   "max_concurrent": concurrent,
                   "space": {"x": {"type": "uniform", "low": 0.0, "high": 1.0},
                             "y": {"type": "uniform", "low": -5.0, "high": 5.0}}},
        "schedule": {"algorithm": "asha", "resource": "epoch", "min": 1, "max": epochs,
                     "reduction_factor": 3},
        "trial": {"command": [ctrial, "--x", "{x}", "--y", "{y}", "--sleep-ms", str(sleep_ms)],
                  "resources": {"memory": "32MiB", "cpus": 0.5}},
    }


os.environ["RELISH_SERVER"] = "unix:" + sock
c = relish.Client()
assert c.address == "unix:" + sock, c.address
me = c.whoami()
assert me["user"] == "root" and me["via"] == "unix", me
ok("Client() found the service through RELISH_SERVER; whoami: %s via %s" % (me["user"], me["via"]))

# submit a dict, follow it to the end
e = c.submit(spec("py-dict", 9, 9, 5))
assert e["status"] == "running" and e["experiment"] == "py-dict", e
snaps = list(c.follow(e["id"], interval=0.2, timeout=120))
assert len(snaps) >= 2 and snaps[-1]["status"] == "done", [s["status"] for s in snaps]
ok("submitted a dict, followed %d changes to %s" % (len(snaps), snaps[-1]["status"]))

trials = c.trials(e["id"])
assert len(trials) == 9, len(trials)
df = c.trials_dataframe(e["id"])
assert len(df) == 9, len(df)
for col in ("params_x", "params_y", "final_accuracy", "final_loss", "status", "objective"):
    assert col in df.columns, (col, list(df.columns))
metrics = c.metrics(e["id"])
final = {}
for m in metrics:
    if m["name"] == "accuracy":
        if m["trial_id"] not in final or m["resource"] >= final[m["trial_id"]][0]:
            final[m["trial_id"]] = (m["resource"], m["value"])
for t in trials:
    row = df.loc[t["id"]]
    assert row["params_x"] == t["params"]["x"], (row["params_x"], t["params"])
    assert row["final_accuracy"] == final[t["id"]][1], (row["final_accuracy"], final[t["id"]])
ok("trials_dataframe: %d rows, params and final metrics as columns %s" % (len(df), sorted(df.columns)[:6]))

long = c.metrics_dataframe(e["id"])
assert len(long) == len(metrics) and list(long.columns)[:4] == ["experiment", "trial_id", "segment_id", "resource"], long.columns
assert set(long["name"]) >= {"accuracy", "loss"}, set(long["name"])
ok("metrics_dataframe: %d rows, long format" % len(long))

# the same rows as `relish export --what wide`
out = subprocess.run([relish_bin, "export", "--what", "wide", "--format", "csv", "--server",
                      "unix:" + sock, "--experiment", "py-dict"], check=True,
                     capture_output=True, text=True).stdout
rows = list(csv.DictReader(io.StringIO(out)))
assert len(rows) == len(df), (len(rows), len(df))
table = {r["trial_id"]: r for r in c.trials_table(e["id"])}
assert set(rows[0].keys()) == set(table[trials[0]["id"]].keys()), (rows[0].keys(), table[trials[0]["id"]].keys())
for r in rows:
    t = table[int(r["trial_id"])]
    for k in ("params_x", "params_y", "final_accuracy", "objective"):
        a, b = float(r[k]), t[k]
        assert math.isclose(a, b, rel_tol=0, abs_tol=0), (k, a, b)
ok("trials_table() has the columns and values of `relish export --what wide`")

# several objectives and a constraint: trials_dataframe has every objective,
# feasibility and the front, as the API's front says (checked here by
# brute force: completed, feasible, not dominated)
mo = c.submit({
    "name": "py-front",
    "objective": [{"metric": "f1", "mode": "min"}, {"metric": "f2", "mode": "min"}],
    "constraints": [{"metric": "c", "max": 0}],
    "search": {"algorithm": "random", "seed": 4, "max_trials": 16, "max_concurrent": 4,
               "space": {"x": {"type": "uniform", "low": 0.0, "high": 1.0},
                         "y": {"type": "uniform", "low": 0.0, "high": 1.0}}},
    "trial": {"command": ["/usr/bin/awk",
                          "BEGIN {{ x = {x}; y = {y}; printf \"RELISH epoch=1 f1=%.6f f2=%.6f "
                          "c=%.6f\\n\", x, (1 + y) * (1 - sqrt(x)), x + y - 1.2 }}"],
              "resources": {"memory": "32MiB", "cpus": 0.5}},
})
assert c.wait(mo["id"], interval=0.2, timeout=60)["status"] == "done"
fr = c.front(mo["id"])
assert [o["metric"] for o in fr["objectives"]] == ["f1", "f2"] and fr["constrained"], fr["objectives"]
df = c.trials_dataframe(mo["id"])
assert len(df) == 16, len(df)
for col in ("objective_f1", "objective_f2", "violation", "feasible", "front"):
    assert col in df.columns, (col, list(df.columns))
pts = {}
for tid, row in df.iterrows():
    x, y = row["params_x"], row["params_y"]
    assert math.isclose(row["objective_f1"], x, abs_tol=1e-5), (row["objective_f1"], x)
    assert math.isclose(row["objective_f2"], (1 + y) * (1 - math.sqrt(x)), abs_tol=1e-5)
    assert bool(row["feasible"]) == (x + y - 1.2 <= 0), (x, y, row["feasible"])
    if row["feasible"] and row["status"] == "completed":
        pts[tid] = (row["objective_f1"], row["objective_f2"])
want = {i for i, p in pts.items()
        if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pts.values())}
got = set(df.index[df["front"]])
assert got == want and got == set(fr["front"]), (got, want, fr["front"])
assert len(df[~df["feasible"]]) >= 1, "no infeasible trial: the check has no teeth"
ok("several objectives: trials_dataframe has objective_f1, objective_f2, feasible and the "
   "front (%d of %d, %d infeasible)" % (len(got), len(df), int((~df["feasible"]).sum())))

# a spec file, and a bad spec: relish validate's message
path = os.path.join(work, "py-file.yaml")
with open(path, "w") as f:
    f.write("name: py-file\nobjective: {metric: accuracy, mode: max}\n"
            "search: {algorithm: random, max_trials: 2, space: {x: {type: uniform, low: 0, high: 1}, "
            "y: {type: uniform, low: 0, high: 1}}}\n"
            "schedule: {algorithm: none, resource: epoch, max: 2}\n"
            "trial: {command: [%s, --x, '{x}', --y, '{y}'], resources: {memory: 32MiB, cpus: 0.5}}\n" % ctrial)
e2 = c.submit(path)
assert e2["experiment"] == "py-file" and e2["spec_path"].endswith("py-file.yaml"), e2
assert c.wait(e2["id"], interval=0.2, timeout=60)["status"] == "done"
ok("submitted a file: %s" % e2["spec_path"])
try:
    c.submit("name: py-bad\nobjective: {metric: accuracy, mode: max}\nsearch:\n  space:\n"
             "    lr: {type: uniform, low: abc, high: 1}\ntrial: {command: [/bin/true]}\n", name="bad.yaml")
    raise AssertionError("a bad spec was accepted")
except relish.RelishError as err:
    assert err.status == 400 and err.code == "RL_ESPEC", (err.status, err.code)
    assert "bad.yaml:5:" in err.message and "search.space.lr.low" in err.message, err.message
    ok("a bad spec: %s %s: %s" % (err.status, err.code, err.message))

# cancel, twice
slow = c.submit(spec("py-slow", 4, 9, 2000, 1))
done = c.cancel(slow["id"])
assert done["status"] == "cancelled", done
try:
    c.cancel(slow["id"])
    raise AssertionError("cancelled twice")
except relish.RelishError as err:
    assert err.status == 409, err
    ok("cancel: cancelled; again: %s %s" % (err.status, err.code))

# TCP with a token: another user, refused what is not theirs
t = relish.Client("http://127.0.0.1:%s" % port, token=token)
assert t.whoami()["user"] == user, t.whoami()
slow2 = c.submit(spec("py-slow2", 4, 9, 2000, 1))
try:
    t.cancel(slow2["id"])
    raise AssertionError("another user cancelled root's experiment")
except relish.RelishError as err:
    assert err.status == 403 and "belongs to root" in err.message, err
    ok("over TCP as %s: cancel refused: %s" % (user, err.message))
assert c.cancel(slow2["id"])["status"] == "cancelled"
try:
    relish.Client("http://127.0.0.1:%s" % port, token="not-a-token-of-this-service").experiments()
    raise AssertionError("a wrong token was accepted")
except relish.RelishError as err:
    assert err.status == 401, err
    ok("a wrong token: %s %s" % (err.status, err.code))
try:
    relish.Client("unix:" + os.path.join(work, "nothing.sock")).server()
    raise AssertionError("no server, no error")
except relish.RelishError as err:
    assert err.status == 0 and "no relish server at unix:" in err.message, err
    ok("no server: " + err.message.split(":")[0])

# the trial helper is part of the package
import relish.trial  # noqa: E402
assert relish.trial.mode() == "oneshot"
ok("relish.trial imports (mode %s)" % relish.trial.mode())
print("%d passed, 0 failed" % checks)
