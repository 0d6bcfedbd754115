#!/usr/bin/env bash
# test_progress_tty.sh - `relish run`'s live block on a real pseudo-terminal
# (python3's pty module) of 80x24, resized to 60 columns halfway through
# (TIOCSWINSZ: the kernel sends SIGWINCH).  A small terminal model replays
# what relish wrote (printable text, CR, LF, cursor up, clear to the end
# of the screen) and checks: no line ever reaches the terminal's width (so
# nothing wraps and the in-place redraw never stacks copies), after the
# resize no line is wider than 60 (events printed above the block, such as
# the final "NAME: done: ..." line or a start-up notice, may wrap: they are
# never redrawn), the
# final screen holds the block once
# (one experiment line, one device line), and the block showed the elapsed
# time and an ETA.
set -euo pipefail
: "${RELISH:?path of the relish binary}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-tty-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"
cat >"$work/trial.py" <<'P'
import os, time
x = float(os.environ["RELISH_PARAM_X"])
for e in range(int(float(os.environ["RELISH_RESOURCE_FROM"])) + 1, int(float(os.environ["RELISH_RESOURCE_TO"])) + 1):
    time.sleep(0.25)
    print("RELISH epoch=%d accuracy=%.9f" % (e, x * e / 3), flush=True)
P
# A long name and long counts: the full line would not fit 80 columns.
name=progress-shown-in-an-eighty-column-terminal
cat >"$work/spec.yaml" <<S
name: $name
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 4, max_trials: 20, max_concurrent: 2,
         space: {x: {type: uniform, low: 0, high: 1}}}
schedule: {algorithm: none, resource: epoch, max: 3}
trial:
  command: ["$PY", "$work/trial.py"]
  resources: {memory: 64MiB, cpus: 0.5}
S
$PY - "$RELISH" "$work" "$name" <<'P'
import fcntl, os, pty, re, select, signal, struct, sys, termios, time
relish, work, name = sys.argv[1:4]

def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

pid, master = pty.fork()
if pid == 0:
    out = os.open(os.path.join(work, "stdout"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)  # the best trial: stdout to a file; the block: stderr, the terminal
    os.execv(relish, [relish, "run", work + "/spec.yaml", "--db", work + "/t.db",
                      "--devices", work + "/devices.yaml"])
set_size(master, 24, 80)
data, resized_at, start = b"", None, time.time()
while True:
    if resized_at is None and time.time() - start > 4:
        set_size(master, 24, 60)
        resized_at = len(data)
        resize_time = time.time()
    if resized_at is not None and "mark" not in dir() and time.time() - resize_time > 0.6:
        mark = len(data)  # from here on everything was drawn for 60 columns
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    if time.time() - start > 120:
        os.kill(pid, signal.SIGKILL)
        sys.exit("FAIL: relish did not finish in 120 s")
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, ("exit", status, data[-800:])
assert resized_at is not None and "mark" in dir(), "the run ended before the resize"

text = data.decode("utf-8", "replace")
c_resize = len(data[:resized_at].decode("utf-8", "replace"))
c_mark = len(data[:mark].decode("utf-8", "replace"))
screen, row, col, width = [[]], 0, 0, 80
problems, frames, i = [], [], 0
while i < len(text):
    if i >= c_mark:
        width = 60
    elif i >= c_resize:
        width = 80  # written before relish saw the resize: the old width applies
    ch = text[i]
    m = re.match(r"\x1b\[(\d*)([A-Za-z])", text[i:])
    if m:
        n = int(m.group(1) or 1)
        if m.group(2) == "A":
            row = max(0, row - n)
        elif m.group(2) == "J":
            del screen[row + 1:]
            screen[row] = screen[row][:col]
        elif m.group(2) == "K":
            screen[row] = []
        i += m.end()
        continue
    if ch == "\r":
        col = 0
    elif ch == "\n":
        frames.append("".join(screen[row]))
        row += 1
        if row == len(screen):
            screen.append([])
    else:
        cur = "".join(screen[row])
        block = (cur.startswith(name[:15]) and not cur.startswith(name + ":")) or cur.startswith("host  ")
        if col >= width and block:
            # (only the block: events above it, "NAME: done: ..." or a
            # notice at start-up, may wrap; they are printed once and
            # scroll away, never redrawn)
            problems.append("wrapped at %d columns: %r" % (width, cur))
        line = screen[row]
        while len(line) < col:
            line.append(" ")
        if col < len(line):
            line[col] = ch
        else:
            line.append(ch)
        col += 1
    i += 1
final = ["".join(r).rstrip() for r in screen if "".join(r).strip()]
assert not problems, problems[:3]
exp_rows = [r for r in final if r.startswith(name[:15]) and not r.startswith(name + ":")]
host_rows = [r for r in final if r.startswith("host  ")]
assert len(exp_rows) == 1 and len(host_rows) == 1, ("block not once on the final screen", final)
assert any("ETA " in f for f in frames), ("no ETA shown", [f for f in frames if f.startswith(name[:15])][-8:])
assert any(re.search(r"\b\d+s\b", f) for f in frames if f.startswith(name[:15])), "no elapsed time"
wide = [f for f in frames if len(f) >= 80 and (f.startswith("host  ") or
        (f.startswith(name[:15]) and not f.startswith(name + ":")))]
assert not wide, wide[:2]
print("ok: %d lines drawn, none reached the width; final block: %s | %s" % (len(frames), exp_rows[0], host_rows[0]))
P
grep -q "^$name: trial " "$work/stdout" || { echo "FAIL: no best trial on stdout" >&2; exit 1; }
