#!/bin/sh
# pmon trace report --format chrome-json in a real viewer: speedscope's own
# release page (npm package speedscope, installed by `make deps` into
# .deps/npm) in headless Chromium (Debian's chromium), driven over the
# DevTools protocol on a pipe (--remote-debugging-pipe: no port, no
# network). The profile is handed to the page as speedscope's command line
# does (its bin/cli.mjs): a script calling speedscope.loadFileFromBase64()
# named in the page's #localProfilePath= hash. Through the page: the profiles
# (one per thread, a kernel lane per thread), each one's frame names and
# totals in the sandwich view's table, the console; a screenshot of the
# flame chart into the build's tests-artifacts/t1840-trace-viewer/.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks
SS=${PMON_SRC:-.}/.deps/npm/node_modules/speedscope
SS_VERSION=1.25.0 # the Makefile's SPEEDSCOPE_VERSION
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "1..0 # SKIP chromium is not installed (Debian package chromium; make deps installs it)"
	exit 77
fi
if ! grep -qF "\"version\": \"$SS_VERSION\"" "$SS/package.json" 2>/dev/null ||
	[ ! -f "$SS/dist/release/index.html" ]; then
	echo "1..0 # SKIP speedscope $SS_VERSION is not in $SS (npm; make deps installs it)"
	exit 77
fi
ART=${PMON_BUILD:-$TMP}/tests-artifacts/t1840-trace-viewer
mkdir -p "$ART" && rm -f "$ART"/*.png "$ART"/*.json
# The browser's process group, killed whatever happens to the driver.
trap '[ -s "$TMP/browser.pgid" ] && kill -KILL -- "-$(cat "$TMP/browser.pgid")" 2>/dev/null; rm -rf "$TMP"' EXIT

# Hooks: three threads, known span names (tests/workloads/tracehooks.c).
PMON_OUTPUT=/dev/null run_pmon 0 trace -o "$TMP/h.trace" -- "$W" 50
run_pmon 0 trace report "$TMP/h.trace" --format chrome-json -o "$TMP/h.json"
# Hooks and the kernel's lanes: naps and writes, their system calls and
# off-CPU spans. Needs tracepoints (as t1810: root and tracefs).
set -- h "$TMP/h.json" outer
if [ "$(id -u)" != 0 ] || ! grep -qw tracefs /proc/filesystems; then
	echo "ok - # SKIP the kernel's lanes: kernel tracepoints need root and tracefs"
else
	run_pmon 0 trace -e sched,syscalls -o "$TMP/k.trace" -- "$W" sleep 3
	run_pmon 0 trace report "$TMP/k.trace" --format chrome-json -o "$TMP/k.json"
	set -- "$@" k "$TMP/k.json" nap,sys_clock_nanosleep
fi

cp "$TMP/h.json" "$ART/" && { [ ! -f "$TMP/k.json" ] || cp "$TMP/k.json" "$ART/"; }

cat >"$TMP/view.py" <<'PY'
# view.py CHROMIUM INDEX_HTML ARTDIR OUT.json [LABEL JSON SHOTS]...: loads
# each Chrome JSON into speedscope and writes what the page shows to OUT.json.
# SHOTS: frame names; the first profile holding each is screenshot.
import base64, fcntl, json, os, re, select, signal, subprocess, sys, time
chromium, index, art, out = sys.argv[1:5]
jobs = [sys.argv[i:i + 3] for i in range(5, len(sys.argv), 3)]
tmp = os.path.dirname(out)
signal.signal(signal.SIGTERM, lambda *a: sys.exit("killed by SIGTERM"))
T_START, T_LOAD, T_STEP = 120, 120, 60  # seconds: a busy 2-core VM is slow
cmd_r, cmd_w = os.pipe()
res_r, res_w = os.pipe()

def child():  # the DevTools pipe: commands on fd 3, answers on fd 4
    a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
    b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
    os.dup2(a, 3)
    os.dup2(b, 4)

env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp)
log = open(os.path.join(tmp, "chromium.log"), "w")
p = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                      "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                      "--user-data-dir=" + os.path.join(tmp, "profile"), "--remote-debugging-pipe",
                      "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
                      "--window-size=1280,800", "about:blank"],
                     preexec_fn=child, pass_fds=(3, 4), start_new_session=True, env=env,
                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)
open(os.path.join(tmp, "browser.pgid"), "w").write(str(p.pid))
os.close(cmd_r)
os.close(res_w)
buf, nid, session, console, dialogs = b"", 0, None, [], []

def send(method, sid=None, **params):
    global nid
    nid += 1
    m = {"id": nid, "method": method, "params": params}
    if sid:
        m["sessionId"] = sid
    os.write(cmd_w, json.dumps(m).encode() + b"\0")
    return nid

def event(m):
    meth, prm = m.get("method"), m.get("params", {})
    if meth == "Runtime.consoleAPICalled":
        console.append([prm["type"], " ".join(str(a.get("value", a.get("description", "")))
                                              for a in prm["args"])[:300]])
    elif meth == "Runtime.exceptionThrown":
        console.append(["exception", json.dumps(prm["exceptionDetails"])[:300]])
    elif meth == "Page.javascriptDialogOpening":  # an alert blocks the page
        dialogs.append(prm.get("message", ""))
        send("Page.handleJavaScriptDialog", m.get("sessionId"), accept=True)

def call(method, sid=None, timeout=T_STEP, **params):
    global buf
    want = send(method, sid, **params)
    end = time.monotonic() + timeout
    while True:
        while b"\0" not in buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([res_r], [], [], left)[0]:
                raise TimeoutError("%s: no answer from the browser in %d s" % (method, timeout))
            d = os.read(res_r, 1 << 20)
            if not d:
                raise EOFError("the browser closed its pipe (chromium.log: %s)" %
                               open(log.name).read()[-300:])
            buf += d
        raw, buf = buf.split(b"\0", 1)
        m = json.loads(raw)
        if m.get("id") == want:
            if "error" in m:
                raise RuntimeError("%s: %s" % (method, m["error"]))
            return m["result"]
        event(m)

def ev(expr):
    r = call("Runtime.evaluate", session, expression=expr, returnByValue=True, awaitPromise=True)
    if "exceptionDetails" in r:
        raise RuntimeError("page: " + json.dumps(r["exceptionDetails"])[:300])
    return r["result"].get("value")

STATE = r"""(() => {
  const text = document.body ? document.body.innerText : "";
  const t = text.match(/^(.*) \((\d+)\/(\d+)\)$/m);
  const rows = [];
  for (const tr of document.querySelectorAll("tr")) {
    const td = tr.querySelectorAll("td");
    const total = td.length === 3 ? td[0].textContent.trim() : "";  // "1.44µs (51%)"
    if (/%\)$/.test(total))
      rows.push([td[2].textContent, total]);
  }
  return {error: /Something went wrong/.test(text), landing: /Drag and drop/.test(text),
          title: t ? t[1] : null, index: t ? +t[2] : 0, n: t ? +t[3] : 0, rows: rows,
          canvas: document.querySelectorAll("canvas").length};
})()"""

def wait_for(pred, what, timeout, press=None, every=3):
    """Polls the page until pred; presses the key PRESS again every EVERY
    seconds meanwhile (a key pressed while the page is still settling after
    the load may be lost)."""
    end = time.monotonic() + timeout
    again = time.monotonic() + every
    if press:
        key(press)
    while True:
        s = ev(STATE)
        if s["error"] or dialogs:
            raise RuntimeError("speedscope: %s" % (dialogs or "Something went wrong"))
        if pred(s):
            return s
        if time.monotonic() > end:
            raise TimeoutError("%s: not within %d s; the page: %s" % (what, timeout, s))
        if press and time.monotonic() > again:
            key(press)
            again = time.monotonic() + every
        time.sleep(0.2)  # a poll, not an assertion

def key(k):  # speedscope's shortcuts: 1 time order, 3 sandwich, n next profile
    ev("window.dispatchEvent(new KeyboardEvent('keypress', {key: %s}))" % json.dumps(k))

def frames():  # twice: the flame chart draws on animation frames
    ev("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

result = {}
try:
    call("Browser.getVersion", timeout=T_START)  # the browser is up
    for label, path, shots in jobs:
        console.clear()
        js = os.path.join(tmp, label + "-profile.js")
        data = open(path, "rb").read()
        with open(js, "w") as f:  # as speedscope's bin/cli.mjs writes it
            f.write("speedscope.loadFileFromBase64(%s, %s)" % (
                json.dumps(os.path.basename(path)), json.dumps(base64.b64encode(data).decode())))
        tid = call("Target.createTarget", url="about:blank")["targetId"]
        session = call("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
        call("Runtime.enable", session)
        call("Page.enable", session)
        # tall, so that the sandwich table lists every frame
        call("Emulation.setDeviceMetricsOverride", session, width=1280, height=4000,
             deviceScaleFactor=1, mobile=False)
        call("Page.navigate", session, url="file://%s#localProfilePath=%s" % (index, js))
        s = wait_for(lambda s: s["n"] > 0, "the profile loaded", T_LOAD)
        s = wait_for(lambda s: s["rows"], "the sandwich view", T_STEP, "3")
        profiles = []
        for i in range(1, s["n"] + 1):
            # n: the next profile (pressed again only if nothing happened for 15 s)
            s = wait_for(lambda s: s["index"] == i and s["rows"], "sandwich of profile %d" % i,
                         T_STEP, "n" if i > 1 else None, 15)
            profiles.append({"title": s["title"], "rows": s["rows"]})
        wait_for(lambda s: not s["rows"], "the time order view", T_STEP, "1")
        call("Emulation.setDeviceMetricsOverride", session, width=1280, height=800,
             deviceScaleFactor=1, mobile=False)
        pngs = []
        for name in filter(None, shots.split(",")):
            have = [k for k, pr in enumerate(profiles) if name in (r[0] for r in pr["rows"])]
            if not have:  # the checks below say which name is missing
                continue
            i = have[0] + 1
            cur = ev(STATE)["index"]
            while cur != i:
                nxt = cur + (1 if cur < i else -1)
                wait_for(lambda s: s["index"] == nxt, "profile %d" % nxt, T_STEP,
                         "n" if cur < i else "p", 15)
                cur = nxt
            frames()
            s = wait_for(lambda s: s["canvas"] > 0, "the flame chart's canvas", T_STEP)
            png = os.path.join(art, "%s-%s.png" % (label, name))
            with open(png, "wb") as f:
                f.write(base64.b64decode(call("Page.captureScreenshot", session, format="png")["data"]))
            pngs.append([png, s["title"]])
        result[label] = {"profiles": profiles, "console": list(console), "shots": pngs}
        call("Target.closeTarget", targetId=tid)
except Exception as e:
    result["error"] = "%s: %s" % (type(e).__name__, e)
finally:
    try:
        send("Browser.close")
        p.wait(10)
    except Exception:
        pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    os.unlink(os.path.join(tmp, "browser.pgid"))  # gone: nothing for the trap to kill
    json.dump(result, open(out, "w"), indent=1)
PY

# The trap above kills the browser if this is cut short.
timeout 480 python3 "$TMP/view.py" "$CHROMIUM" "$SS/dist/release/index.html" "$ART" \
	"$TMP/seen.json" "$@" >"$TMP/view.out" 2>&1
[ -s "$TMP/view.out" ] && sed 's/^/# /' "$TMP/view.out"
check "the driver ran" [ -s "$TMP/seen.json" ]
check "speedscope opened every file" python3 - "$TMP/seen.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "error" not in d, d["error"]
PY

# What the page shows against the spans in the JSON: per lane, the frame
# names and (hooks) their totals; speedscope shows 3 significant digits.
check "hooks: one profile per thread, the span names and their totals as in the JSON" \
	python3 - "$TMP/seen.json" "$TMP/h.json" <<'PY'
import collections, json, re, sys
seen = json.load(open(sys.argv[1]))["h"]
ev = json.load(open(sys.argv[2]))["traceEvents"]
unit = {"ns": 1e-3, "µs": 1, "ms": 1e3, "s": 1e6}
total, open_ = collections.Counter(), collections.defaultdict(list)
for e in ev:
    if e["ph"] == "B":
        open_[(e["tid"], e["name"])].append(e["ts"])
    elif e["ph"] == "E":
        total[(e["tid"], e["name"])] += e["ts"] - open_[(e["tid"], e["name"])].pop()
lanes = {}
for pr in seen["profiles"]:
    # "PROCESS (pid N), THREAD (tid M)": the names from the metadata
    tid = int(re.search(r"\(tid (\d+)\)$", pr["title"]).group(1))
    lanes[tid] = {}
    for name, shown in pr["rows"]:
        v, u = re.match(r"([0-9.]+)(ns|µs|ms|s) ", shown).groups()
        lanes[tid][name] = float(v) * unit[u]
names = sorted(sorted(v) for v in lanes.values())
assert names == [["inner", "outer"], ["inner", "outer"], ["region-a", "setup"]], names
for tid, rows in lanes.items():
    for name, us in rows.items():
        want = total[(tid, name)]
        assert abs(us - want) <= 0.006 * want + 0.001, (tid, name, us, want)
print("# speedscope's lanes:", {t: sorted(v) for t, v in lanes.items()})
PY
for k in h k; do
	grep -q "\"$k\"" "$TMP/seen.json" || continue
	# k: each kernel span's begin and end must match (issue #28.7)
	check "$k: speedscope warned of nothing" python3 - "$TMP/seen.json" "$k" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))[sys.argv[2]]["console"]
bad = [m for m in c if m[0] not in ("log", "info", "debug", "timeEnd")]
assert not bad, (len(bad), bad[:5])
PY
done
if grep -q '"k"' "$TMP/seen.json"; then
	check "kernel: the hooks' lane and its kernel lane, frames named as the channels" \
		python3 - "$TMP/seen.json" "$TMP/k.json" <<'PY'
import json, sys
seen = json.load(open(sys.argv[1]))["k"]["profiles"]
ev = json.load(open(sys.argv[2]))["traceEvents"]
main = [e for e in ev if e["name"] == "nap"][0]["tid"]
# speedscope titles a lane "PROCESS (pid N), THREAD (tid M)" with the
# names of the process_name and thread_name metadata
meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
def title(tid):
    pid = [e for e in ev if e["tid"] == tid][0]["pid"]
    return "%s (pid %d), %s (tid %d)" % (meta[("process_name", pid, pid)], pid,
                                         meta[("thread_name", pid, tid)], tid)
lanes = {p["title"]: {r[0] for r in p["rows"]} for p in seen}
hooks = lanes[title(main)]
kern = lanes[title(main + 1000000000)]
assert hooks == {"nap", "write"}, hooks
assert {"sys_clock_nanosleep", "sys_write", "off-cpu"} <= kern, kern
# one frame per channel: speedscope names a frame by its name and args
chans = {e["name"] for e in ev if e["ph"] in "BE"}
assert all(n in chans for v in lanes.values() for n in v), lanes
PY
fi
check "screenshots of the flame chart: $(cd "$ART" && ls *.png | sed "s|^|$ART/|" | tr '\n' ' ')" \
	python3 - "$TMP/seen.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
shots = [s for k in ("h", "k") if k in d for s in d[k]["shots"]]
assert len(shots) == 1 + 2 * ("k" in d), shots
for png, title in shots:
    b = open(png, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n" and len(b) > 10000, (png, len(b))
    print("# %s: %s" % (png, title))
PY
finish
