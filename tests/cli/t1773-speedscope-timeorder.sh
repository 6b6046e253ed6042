#!/bin/sh
# pmon report --format speedscope in the real viewer: a program that runs
# phase_a, then phase_b, then phase_c, loaded into speedscope's release page
# (.deps/npm, as t1840) in headless Chromium over the DevTools pipe; in the
# Time Order view the pointer over the left, middle and right of the flame
# chart finds phase_a, phase_b and phase_c. The screenshot is kept in the
# build's tests-artifacts/t1773-speedscope-timeorder/.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
S=$PMON_WORKLOADS/wl-stacks
SS=${PMON_SRC:-.}/.deps/npm/node_modules/speedscope
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "1..0 # SKIP chromium is not installed (Debian package chromium; make deps installs it)"
	exit 77
fi
if [ ! -f "$SS/dist/release/index.html" ]; then
	echo "1..0 # SKIP speedscope is not in $SS (npm; make deps installs it)"
	exit 77
fi
ART=${PMON_BUILD:-$TMP}/tests-artifacts/t1773-speedscope-timeorder
mkdir -p "$ART" && rm -f "$ART"/*.png "$ART"/*.json
trap '[ -s "$TMP/browser.pgid" ] && kill -KILL -- "-$(cat "$TMP/browser.pgid")" 2>/dev/null; rm -rf "$TMP"' EXIT

run_pmon 0 record -g -F 2000 -o "$TMP/ph.data" -- "$S" phases 100000000
run_pmon 0 report -i "$TMP/ph.data" --format speedscope -o "$TMP/ph.json"
cp "$TMP/ph.json" "$ART/"

cat >"$TMP/view.py" <<'PY'
# view.py CHROMIUM INDEX_HTML PROFILE PNG OUT.json: the frame names under the
# pointer at three places of the Time Order view's flame chart.
import base64, fcntl, json, os, select, signal, subprocess, sys, time
chromium, index, path, png, out = sys.argv[1:6]
at = [float(x) for x in sys.argv[6].split(",")]  # where along the time axis to point
tmp = os.path.dirname(out)
signal.signal(signal.SIGTERM, lambda *a: sys.exit("killed by SIGTERM"))
cmd_r, cmd_w = os.pipe()
res_r, res_w = os.pipe()
def child():
    a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10); b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
    os.dup2(a, 3); os.dup2(b, 4)
env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp)
log = open(os.path.join(tmp, "chromium.log"), "w")
p = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                      "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                      "--user-data-dir=" + os.path.join(tmp, "profile"), "--remote-debugging-pipe",
                      "--no-first-run", "--disable-extensions", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                      "--window-size=1280,800", "about:blank"],
                     preexec_fn=child, pass_fds=(3, 4), start_new_session=True, env=env,
                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)
open(os.path.join(tmp, "browser.pgid"), "w").write(str(p.pid))
os.close(cmd_r); os.close(res_w)
buf, nid, session = b"", 0, None
def call(method, sid=None, timeout=60, **params):
    global buf, nid
    nid += 1; want = nid
    m = {"id": nid, "method": method, "params": params}
    if sid: m["sessionId"] = sid
    os.write(cmd_w, json.dumps(m).encode() + b"\0")
    end = time.monotonic() + timeout
    while True:
        while b"\0" not in buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([res_r], [], [], left)[0]:
                raise TimeoutError("%s: no answer in %d s" % (method, timeout))
            d = os.read(res_r, 1 << 20)
            if not d: raise EOFError("the browser closed its pipe")
            buf += d
        raw, buf = buf.split(b"\0", 1)
        m = json.loads(raw)
        if m.get("id") == want:
            if "error" in m: raise RuntimeError("%s: %s" % (method, m["error"]))
            return m["result"]
def ev(expr):
    r = call("Runtime.evaluate", session, expression=expr, returnByValue=True, awaitPromise=True)
    return r["result"].get("value")
def poll(expr, what, timeout=120):
    end = time.monotonic() + timeout
    while True:
        v = ev(expr)
        if v: return v
        if time.monotonic() > end: raise TimeoutError(what)
        time.sleep(0.2)  # a poll, not an assertion
result = {}
try:
    call("Browser.getVersion", timeout=120)
    js = os.path.join(tmp, "profile.js")
    with open(js, "w") as f:  # as speedscope's bin/cli.mjs hands it a file
        f.write("speedscope.loadFileFromBase64(%s, %s)" % (json.dumps(os.path.basename(path)),
                json.dumps(base64.b64encode(open(path, "rb").read()).decode())))
    tid = call("Target.createTarget", url="about:blank")["targetId"]
    session = call("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
    call("Runtime.enable", session); call("Page.enable", session)
    call("Emulation.setDeviceMetricsOverride", session, width=1280, height=800,
         deviceScaleFactor=1, mobile=False)
    call("Page.navigate", session, url="file://%s#localProfilePath=%s" % (index, js))
    poll("document.body && /wl-stacks/.test(document.body.innerText) && "
         "!/Drag and drop/.test(document.body.innerText)", "the profile loaded")
    ev("window.dispatchEvent(new KeyboardEvent('keypress', {key: '1'}))")  # Time Order
    poll("document.querySelectorAll('canvas').length > 0", "the flame chart")
    ev("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    result["title"] = ev("document.body.innerText.split('\\n').filter(l => /wl-stacks/.test(l))[0]")
    seen = []
    for fx in at:
        got = None
        for y in range(60, 790, 6):
            call("Input.dispatchMouseEvent", session, type="mouseMoved", x=int(1280 * fx), y=y)
            t = ev("document.body.innerText")
            m = [w for w in ("phase_a", "phase_b", "phase_c") if w in t]
            if m:
                got = m[0]
                break
        seen.append(got)
    result["seen"] = seen
    with open(png, "wb") as f:
        f.write(base64.b64decode(call("Page.captureScreenshot", session, format="png")["data"]))
except Exception as e:
    result["error"] = "%s: %s" % (type(e).__name__, e)
finally:
    try:
        call("Browser.close", timeout=5); p.wait(10)
    except Exception:
        pass
    try: os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError: pass
    p.wait()
    os.unlink(os.path.join(tmp, "browser.pgid"))
    json.dump(result, open(out, "w"), indent=1)
PY
# The middle of each phase's stretch of samples, as a fraction of the profile's
# time (from the file: the phases' lengths follow the CPU time each got).
at=$(python3 - "$TMP/ph.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); fr = s["shared"]["frames"]
p = s["profiles"][s["activeProfileIndex"]]
span, t = {}, 0
for st, w in zip(p["samples"], p["weights"]):
    for i in st:
        if fr[i]["name"].startswith("phase_"):
            a, b = span.get(fr[i]["name"], (t, t))
            span[fr[i]["name"]] = (min(a, t), t + w)
    t += w
print(",".join("%.3f" % ((span[k][0] + span[k][1]) / 2 / t) for k in sorted(span)))
PY
)
timeout 300 python3 "$TMP/view.py" "$CHROMIUM" "$(cd "$SS" && pwd)/dist/release/index.html" \
	"$TMP/ph.json" "$ART/time-order.png" "$TMP/seen.json" "$at"
cp "$TMP/seen.json" "$ART/"
check "speedscope's Time Order view: phase_a, phase_b, phase_c from left to right ($(cat "$TMP/seen.json" | tr -d '\n'))" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "error" not in d, d["error"]
assert d["seen"] == ["phase_a", "phase_b", "phase_c"], d
assert d["title"].startswith("cpu-clock in wl-stacks (pid "), d["title"]' "$TMP/seen.json"
check "the screenshot is kept: $ART/time-order.png" test -s "$ART/time-order.png"
finish
