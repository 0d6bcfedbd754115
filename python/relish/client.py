"""relish.client - a client of the HTTP API of `relish serve` (docs/api.md).

Standard library only: http.client over the service's unix socket (the
default; the user is who the kernel says the process is) or over TCP with
a bearer token.  pandas is imported only by the *_dataframe methods.

Where the service is, as for the CLI (docs/cli.md): the `server` argument,
else $RELISH_SERVER, else the default socket /var/lib/relish/relish.sock.
An address is "unix:PATH", a path, "HOST:PORT" or "http://HOST:PORT".
The token for TCP: the `token` argument, else $RELISH_TOKEN, else the
file named by $RELISH_TOKEN_FILE.
"""

import http.client
import json
import os
import socket
import time
import urllib.parse

DEFAULT_SOCKET = "/var/lib/relish/relish.sock"


class RelishError(Exception):
    """An error the service answered (or none answering).

    status: the HTTP status (0 when no service answered); code: the
    error's RL_E* name (docs/api.md "Errors"); message: the service's words.
    """

    def __init__(self, status, code, message):
        super().__init__("%s (%s %s)" % (message, status, code))
        self.status = status
        self.code = code
        self.message = message


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("relish", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError:
            s.close()
            raise
        self.sock = s


def _parse_address(addr):
    """("unix", path) or ("tcp", host, port)."""
    if addr.startswith("unix:"):
        return ("unix", addr[5:])
    if addr.startswith("/") or addr.startswith("."):
        return ("unix", addr)
    if addr.startswith("http://"):
        addr = addr[7:].rstrip("/")
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("relish server address %r: expected unix:PATH, a path, HOST:PORT "
                         "or http://HOST:PORT" % addr)
    return ("tcp", host.strip("[]") or "127.0.0.1", int(port))


class Client:
    """The API of one relish service.

    Client()                              the default socket (or $RELISH_SERVER)
    Client("unix:/srv/relish/relish.sock")
    Client("http://127.0.0.1:8080", token="...")
    """

    def __init__(self, server=None, token=None, timeout=30.0):
        if server:
            self.address, self._from = server, "server="
        elif os.environ.get("RELISH_SERVER"):
            self.address, self._from = os.environ["RELISH_SERVER"], "RELISH_SERVER"
        else:
            self.address, self._from = DEFAULT_SOCKET, "the default socket"
        self._where = _parse_address(self.address)
        if token is None:
            token = os.environ.get("RELISH_TOKEN")
        if token is None and os.environ.get("RELISH_TOKEN_FILE"):
            with open(os.environ["RELISH_TOKEN_FILE"]) as f:
                token = f.read().strip()
        self.token = token or None
        self.timeout = timeout

    def __repr__(self):
        return "relish.Client(%r)" % self.address

    # ---- requests ----

    def _conn(self):
        if self._where[0] == "unix":
            return _UnixConnection(self._where[1], self.timeout)
        return http.client.HTTPConnection(self._where[1], self._where[2], timeout=self.timeout)

    def request(self, method, path, body=None, raw=False):
        """One request; the JSON answer (or (text, headers) with raw=True).

        path is under /api/v1 unless it starts with "/".  Raises
        RelishError with the service's code and message on an error."""
        if not path.startswith("/"):
            path = "/api/v1/" + path
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token and self._where[0] == "tcp":
            headers["Authorization"] = "Bearer " + self.token
        conn = self._conn()
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise RelishError(0, "RL_ENOSERVER",
                              "no relish server at %s (%s): %s; start one with `relish serve` "
                              "(docs/serve.md)" % (self.address, self._from, e)) from None
        finally:
            conn.close()
        ctype = resp.getheader("Content-Type", "")
        if resp.status >= 400:
            try:
                e = json.loads(payload)["error"]
                raise RelishError(resp.status, e.get("code", "HTTP"), e.get("message", ""))
            except (ValueError, KeyError, TypeError):
                raise RelishError(resp.status, "HTTP", payload.decode(errors="replace")) from None
        if raw or not ctype.startswith("application/json"):
            return payload.decode(errors="replace"), dict(resp.getheaders())
        return json.loads(payload)

    def _get(self, path, **query):
        q = {k: v for k, v in query.items() if v is not None}
        if q:
            path += "?" + urllib.parse.urlencode(q)
        return self.request("GET", path)

    @staticmethod
    def _ref(ref):
        if isinstance(ref, dict):
            ref = ref["id"]
        return urllib.parse.quote(str(ref), safe="")

    # ---- the service ----

    def server(self):
        """The service: version, uptime, devices, access."""
        return self._get("server")

    def whoami(self):
        """Who the service thinks this client is."""
        return self._get("whoami")

    def devices(self):
        """Devices: reserved and used memory, what runs where."""
        return self._get("devices")["devices"]

    def queue(self):
        """Per user: share, attained GPU-seconds, running and waiting segments."""
        return self._get("queue")

    # ---- experiments ----

    def experiments(self, user=None, status=None, since=None, limit=None, after=None):
        """Experiments, oldest first (filters: owner name, status, since: a
        unix time or an age such as "7d").  Every page in turn unless limit
        or after asks for one page (the service answers 1,000 at most)."""
        q = dict(user=user, status=status, since=since, limit=limit, after=after)
        page = self._get("experiments", **q)
        out = page["experiments"]
        while limit is None and after is None and page.get("next_after"):
            q["after"] = page["next_after"]
            page = self._get("experiments", **q)
            out += page["experiments"]
        return out

    def experiment(self, ref):
        """One experiment by id or name."""
        return self._get("experiments/" + self._ref(ref))

    def submit(self, spec, name=None, dir=None):
        """Submit a spec; returns the experiment once the service committed it.

        spec: a dict (the spec itself), a path to a YAML or JSON file, or
        the text of one (a string with a newline).  Relative paths in the
        spec start from dir (default: the file's folder, else the current
        one).  A bad spec raises RelishError with `relish validate`'s
        FILE:LINE:COL message."""
        body = {}
        if isinstance(spec, dict):
            body["spec"] = spec
            body["format"] = "json"
            body["name"] = name or "spec.json"
        elif isinstance(spec, (str, os.PathLike)) and "\n" not in str(spec):
            path = os.fspath(spec)
            with open(path) as f:
                body["spec"] = f.read()
            body["name"] = name or path
            body["format"] = "json" if path.endswith(".json") else "yaml"
            dir = dir or os.path.dirname(os.path.abspath(path))
        else:
            body["spec"] = str(spec)
            body["name"] = name or "spec.yaml"
            body["format"] = "json" if str(spec).lstrip().startswith("{") else "yaml"
        body["dir"] = os.path.abspath(dir or os.getcwd())
        return self.request("POST", "experiments", body)

    def cancel(self, ref):
        """Cancel an experiment (its owner, root or the admin group)."""
        return self.request("POST", "experiments/%s/cancel" % self._ref(ref))

    def best(self, ref):
        """The best trial (id, params, objective); RelishError 404 while none has a value."""
        return self._get("experiments/%s/best" % self._ref(ref))

    def front(self, ref):
        """Every trial with a value of each objective, its feasibility and the
        Pareto front: {"objectives": [{"metric", "mode"}], "constrained",
        "front": [trial ids], "trials": [{"trial_id", "values", "violation",
        "feasible", "front", ...}]} (docs/api.md, GET .../front)."""
        return self._get("experiments/%s/front" % self._ref(ref))

    def trials(self, ref, status=None, after=None):
        """Trials of an experiment by index (after: a cursor, see follow_trials)."""
        return self._get("experiments/%s/trials" % self._ref(ref), status=status,
                         after=after)["trials"]

    def trial(self, trial_id):
        return self._get("trials/%d" % int(trial_id))

    def _pages(self, path, key, param, next_key, start=None, **query):
        """Every page of a list the service answers a page at a time: while
        an answer says "more", read on with param = its next_key."""
        rows, cur = [], start
        while True:
            page = self._get(path, **dict(query, **{param: cur}))
            rows.extend(page[key])
            if not page.get("more") or not page[key]:
                return rows
            cur = page[next_key]

    def metrics(self, ref, trial=None, name=None):
        """Metric rows: experiment, trial_id, segment_id, resource, name, value, at.

        The service answers a page of rows at a time (20,000 at most); every
        page is read here."""
        return self._pages("experiments/%s/metrics" % self._ref(ref), "metrics", "offset",
                           "next_offset", trial=trial, name=name)

    def segments(self, ref):
        """Every segment of an experiment (10,000 a page; every page is read)."""
        return self._pages("experiments/%s/segments" % self._ref(ref), "segments", "offset",
                           "next_offset")

    def events(self, ref, after=None):
        """Every event after id `after`, oldest first (5,000 a page; every page is read)."""
        return self._pages("experiments/%s/events" % self._ref(ref), "events", "after",
                           "last_id", start=after)

    def log(self, segment_id, tail=None):
        """A segment's log as text (tail: its last bytes only)."""
        path = "segments/%d/log" % int(segment_id)
        if tail is not None:
            path += "?tail=%d" % int(tail)
        return self.request("GET", path, raw=True)[0]

    # ---- following ----

    def follow(self, ref, interval=1.0, timeout=None):
        """Yield the experiment each time it changes, until it has ended
        (the last one yielded is final).  timeout (seconds) raises
        TimeoutError if it is still running then."""
        last = None
        start = time.monotonic()
        while True:
            e = self.experiment(ref)
            snap = json.dumps({k: e.get(k) for k in ("status", "paused", "trials", "best")}, sort_keys=True)
            if snap != last:
                last = snap
                yield e
            if e["status"] != "running":
                return
            if timeout is not None and time.monotonic() - start > timeout:
                raise TimeoutError("experiment %s still running after %g s" % (ref, timeout))
            time.sleep(interval)

    def wait(self, ref, interval=1.0, timeout=None):
        """Block until the experiment ends; returns it."""
        e = None
        for e in self.follow(ref, interval=interval, timeout=timeout):
            pass
        return e

    def follow_trials(self, ref, interval=1.0, timeout=None):
        """Yield lists of trials that changed (the first: all of them),
        polling with ?after=, until the experiment has ended."""
        cursor = None
        start = time.monotonic()
        while True:
            running = self.experiment(ref)["status"] == "running"
            ans = self._get("experiments/%s/trials" % self._ref(ref), after=cursor)
            if ans["trials"]:
                yield ans["trials"]
            cursor = ans.get("cursor") or cursor
            if not running:
                return
            if timeout is not None and time.monotonic() - start > timeout:
                raise TimeoutError("experiment %s still running after %g s" % (ref, timeout))
            time.sleep(interval)

    # ---- tables ----

    def trials_table(self, ref):
        """One dict per trial: its columns, params_NAME for each parameter
        and final_NAME for each metric's value at the trial's highest
        resource: the columns of `relish export --what wide`.  With several
        objectives or constraints, also objective_METRIC for each objective
        (its value at the trial's last boundary), violation, feasible and
        front (on the Pareto front: completed, feasible, not dominated)."""
        trials = self.trials(ref)
        fr = self.front(ref)
        multi = len(fr["objectives"]) > 1 or fr["constrained"]
        by_id = {t["trial_id"]: t for t in fr["trials"]}
        final = {}
        for m in self.metrics(ref):
            key = (m["trial_id"], m["name"])
            if key not in final or m["resource"] >= final[key][0]:
                final[key] = (m["resource"], m["value"])
        pnames, mnames = [], []
        for t in trials:
            for k in (t.get("params") or {}):
                if k not in pnames:
                    pnames.append(k)
        for (_, name) in final:
            if name not in mnames:
                mnames.append(name)
        rows = []
        for t in trials:
            r = {"experiment": t["experiment"], "trial_id": t["id"], "index": t["index"],
                 "status": t["status"], "resource": t["resource"], "objective": t["objective"],
                 "objective_resource": t["objective_resource"], "segments": t["segments"],
                 "oom": t["oom"], "error": t["error"], "created_at": t["created_at"],
                 "updated_at": t["updated_at"]}
            params = t.get("params") or {}
            for k in pnames:
                r["params_" + k] = params.get(k)
            for k in mnames:
                v = final.get((t["id"], k))
                r["final_" + k] = v[1] if v else None
            if multi:
                f = by_id.get(t["id"])
                for i, o in enumerate(fr["objectives"]):
                    r["objective_" + o["metric"]] = f["values"][i] if f else None
                r["violation"] = f["violation"] if f else None
                r["feasible"] = f["feasible"] if f else None
                r["front"] = bool(f and f["front"])
            rows.append(r)
        return rows

    def trials_dataframe(self, ref):
        """trials_table() as a pandas DataFrame indexed by trial_id."""
        pd = _pandas()
        rows = self.trials_table(ref)
        df = pd.DataFrame(rows)
        return df.set_index("trial_id") if len(df) else df

    def metrics_dataframe(self, ref, trial=None, name=None):
        """Every metric row, long format (trial_id, segment_id, resource, name, value, at)."""
        pd = _pandas()
        return pd.DataFrame(self.metrics(ref, trial=trial, name=name),
                            columns=["experiment", "trial_id", "segment_id", "resource",
                                     "name", "value", "at"])


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("relish's *_dataframe methods need pandas (Debian: python3-pandas); "
                          "trials_table() and metrics() give the same rows without it") from None
    return pandas
