#!/usr/bin/env python3
"""End-to-end measurements of the built host (runtime/bin) over real pipes, as the TypeScript side uses it.

  python3 runtime/bench/stdio_bench.py            # after runtime/build.sh

Prints JSON: cold start to ready, cold/warm compile per example, and apply throughput over stdio at
batch 1/10/100 with pipelining (a window of requests in flight). Bounded: a few seconds per measurement.
"""
import json, os, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = os.environ.get("EVENTSOURCING_RUNTIME_HOST") or os.path.join(ROOT, "runtime", "bin", "EventSourcing.Runtime")
EXAMPLES = os.path.join(ROOT, "examples")


def start(mode):
    t0 = time.perf_counter()
    p = subprocess.Popen([HOST, "--mode", mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=1 << 20)
    ready = json.loads(p.stdout.readline())
    assert ready["type"] == "ready", ready
    return p, (time.perf_counter() - t0) * 1000


def call(p, rid, typ, payload):
    p.stdin.write((json.dumps({"id": rid, "type": typ, "payload": payload}) + "\n").encode())
    p.stdin.flush()
    resp = json.loads(p.stdout.readline())
    assert resp["id"] == rid and resp["type"] == "result", str(resp)[:500]
    return resp["payload"]


def files(name):
    d = os.path.join(EXAMPLES, name)
    return [{"path": f, "content": open(os.path.join(d, f), encoding="utf-8").read()}
            for f in sorted(os.listdir(d)) if f.endswith(".cs")]


def run_window(p, line, seconds, window=8):
    """Keeps `window` requests in flight for `seconds`; a reader thread drains responses."""
    slots = threading.Semaphore(window)
    state = {"received": 0, "last": b""}
    stop_reading = threading.Event()
    sent = 0

    def reader():
        while True:
            resp = p.stdout.readline()
            state["last"] = resp
            state["received"] += 1
            slots.release()
            if stop_reading.is_set() and state["received"] >= sent_box[0]:
                return

    sent_box = [1 << 62]
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        slots.acquire()
        p.stdin.write(line)
        p.stdin.flush()
        sent += 1
    elapsed = time.perf_counter() - t0
    received = state["received"]
    sent_box[0] = sent
    stop_reading.set()
    t.join(timeout=30)
    return received, elapsed, state["last"]


def stop(p):
    p.stdin.close()
    p.wait(timeout=10)


def main():
    out = {}
    starts = []
    for mode in ["exec"] * 5 + ["compile"] * 5:
        p, ms = start(mode)
        starts.append(ms)
        stop(p)
    out["coldStartToReadyMs"] = {"median": round(statistics.median(starts), 1), "min": round(min(starts), 1),
                                 "max": round(max(starts), 1), "runs": len(starts)}

    compile_ = {}
    assembly = None
    for name in ["bank-account", "orders", "customer-totals"]:
        p, _ = start("compile")
        t0 = time.perf_counter()
        r = call(p, 1, "compile", {"files": files(name)})
        cold = (time.perf_counter() - t0) * 1000
        assert r["ok"], r
        if name == "bank-account":
            assembly = r["assembly"]
        warm = []
        for i in range(8):
            t0 = time.perf_counter()
            call(p, 2 + i, "compile", {"files": files(name)})
            warm.append((time.perf_counter() - t0) * 1000)
        compile_[name] = {"coldMs": round(cold, 1), "warmMedianMs": round(statistics.median(warm[3:]), 1)}
        stop(p)
    out["compile"] = compile_

    p, _ = start("exec")
    call(p, 1, "load", {"assemblyId": "bank", "assembly": assembly})
    apply = {}
    for batch in (1, 10, 100):
        events = [{"eventId": f"e{i}", "aggregateId": "a1", "aggregateType": "account", "eventType": "MoneyDeposited",
                   "version": i + 2, "timestamp": "2025-01-01T00:00:00.000Z", "data": {"amount": 10.5},
                   "metadata": None, "correlationId": "c", "causationId": None} for i in range(batch)]
        payload = {"assemblyId": "bank", "className": "BankAccount.AccountReducer",
                   "groups": [{"state": {"owner": "alice", "balance": 100, "transactions": 1}, "events": events}]}
        line = (json.dumps({"id": 7, "type": "apply", "payload": payload}) + "\n").encode()
        run_window(p, line, 0.5)  # warm-up (JIT tiers)
        received, elapsed, last = run_window(p, line, 2.0)
        assert json.loads(last)["payload"]["results"][0]["ok"], last[:300]
        apply[f"batch{batch}"] = {"eventsPerSecond": round(received * batch / elapsed),
                                  "requestsPerSecond": round(received / elapsed)}
    out["applyOverStdio"] = apply
    stop(p)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
