#!/usr/bin/env python3
"""A mediagen remote worker in plain Python (standard library only).

It serves the custom models declared in mediagen.json beside it, over the worker protocol
(/worker/v1, docs/workers.md):

  image/acme/gradient-v1  {width, height, colors}           -> a PNG gradient (zlib + struct)
  audio/acme/tone-v1      {frequency, duration, waveform}   -> a 16-bit mono WAV (wave)

The loop: claim (a long-poll) -> progress `processing` -> compute -> progress `sampling` ->
PUT the file -> complete (with duration_us for audio). A heartbeat thread keeps the lease while
it computes; a 409 from the server (cancelled, deleted, timed out, lease lost) drops the job;
an exception fails it. SIGTERM/SIGINT: stop claiming, finish the job in hand, exit.

  MEDIAGEN_WORKER_TOKEN=mgw_... python3 worker.py --server http://127.0.0.1:8080

Replace `render_gradient` and `render_tone` (or add to RENDERERS) to serve your own models.
"""

import argparse
import email.utils
import json
import math
import os
import random
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import wave
import zlib
from array import array

WORKER_API = "/worker/v1"
#: The longest Retry-After a call waits for before its retry (the node worker's bound: 20 s).
MAX_RETRY_AFTER = 20.0
#: The longest pause between failed claims.
MAX_CLAIM_PAUSE = 30.0


# --------------------------------------------------------------------------- the models


def parse_color(text):
    text = text.lstrip("#")
    return tuple(int(text[i : i + 2], 16) for i in (0, 2, 4))


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def render_gradient(request, out_dir, progress):
    """A left-to-right gradient through `colors`, evenly spaced: an 8-bit RGB PNG."""
    width = int(request.get("width", 512))
    height = int(request.get("height", 512))
    colors = [parse_color(c) for c in request.get("colors") or ["#000000", "#ffffff"]]
    if len(colors) == 1:
        colors = colors * 2
    progress("sampling")
    row = bytearray()
    spans = len(colors) - 1
    for x in range(width):
        t = x / (width - 1) if width > 1 else 0.0
        i = min(int(t * spans), spans - 1)
        local = t * spans - i
        a, b = colors[i], colors[i + 1]
        row.extend(round(a[c] + (b[c] - a[c]) * local) for c in range(3))
    # Every scanline is the same: filter byte 0 (None) and the row.
    raw = (b"\x00" + bytes(row)) * height
    png = (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + png_chunk(b"IDAT", zlib.compress(raw, 6))
        + png_chunk(b"IEND", b"")
    )
    name = "output.png"
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(png)
    return [{"name": name, "content_type": "image/png"}]


def wave_sample(shape, phase):
    """One period of `shape` at `phase` in [0, 1), in [-1, 1]."""
    if shape == "square":
        return 1.0 if phase < 0.5 else -1.0
    if shape == "triangle":
        return 4.0 * phase - 1.0 if phase < 0.5 else 3.0 - 4.0 * phase
    if shape == "sawtooth":
        return 2.0 * phase - 1.0
    return math.sin(2.0 * math.pi * phase)


def render_tone(request, out_dir, progress):
    """`duration` seconds of one `frequency` at 44.1 kHz, 16-bit mono, with 10 ms fades."""
    rate = 44100
    frequency = float(request.get("frequency", 440))
    duration = float(request.get("duration", 2))
    shape = request.get("waveform", "sine")
    frames = int(round(duration * rate))
    fade = min(int(rate * 0.01), frames // 2)
    progress("sampling")
    samples = array("h", bytes(2 * frames))
    for n in range(frames):
        gain = 0.5
        if n < fade:
            gain *= n / fade
        elif n >= frames - fade:
            gain *= (frames - 1 - n) / fade
        samples[n] = int(32767 * gain * wave_sample(shape, (n * frequency / rate) % 1.0))
    if sys.byteorder == "big":
        samples.byteswap()
    name = "output.wav"
    with wave.open(os.path.join(out_dir, name), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    # The measured length: per-second models are charged by it.
    return [{"name": name, "content_type": "audio/wav", "duration_us": round(frames * 1_000_000 / rate)}]


RENDERERS = {
    "image/acme/gradient-v1": render_gradient,
    "audio/acme/tone-v1": render_tone,
}


# --------------------------------------------------------------------------- the protocol


def retry_after(headers, now=None):
    """The seconds a Retry-After header asks for (delta-seconds or an HTTP date); None without one."""
    text = (headers.get("Retry-After") or "").strip() if headers is not None else ""
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None or at.tzinfo is None:  # "-0000" or no zone: not an HTTP date
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


class Refused(Exception):
    """The server answered with an error status (`retry_after`: its Retry-After in seconds, or None)."""

    def __init__(self, status, body, what, retry_after=None):
        self.status = status
        self.body = body if isinstance(body, dict) else {}
        self.retry_after = retry_after
        super().__init__("%s: the server answered HTTP %d: %s" % (what, status, self.body.get("error", "")))


class JobStopped(Exception):
    """A 409: the job is no longer this worker's (cancelled, deleted, timed out, lease lost)."""

    def __init__(self, reason):
        self.reason = reason
        super().__init__("job stopped: %s" % reason)


class Client:
    def __init__(self, server, token, attempts=6):
        parts = urllib.parse.urlsplit(server)
        if parts.scheme not in ("http", "https"):
            raise SystemExit("--server must be an http(s) URL")
        self.base = "%s://%s%s" % (parts.scheme, parts.netloc, parts.path.rstrip("/"))
        self.token = token
        self.attempts = attempts
        self.max_retry_after = MAX_RETRY_AFTER

    def rebase(self, url):
        """A URL the server gave (built from its public URL), taken onto the URL we reach it at."""
        parts = urllib.parse.urlsplit(url)
        at = parts.path.find(WORKER_API + "/")
        if at < 0:
            raise ValueError("not a worker URL")
        return self.base + parts.path[at:] + ("?" + parts.query if parts.query else "")

    def call(self, what, method, url, body=None, headers=None, timeout=60, retry=True, data_file=None):
        """One call, retried on network errors, 429 and 5xx (every job call is safe to repeat):
        after a jittered backoff, or the answer's Retry-After when longer, up to max_retry_after."""
        attempts = self.attempts if retry else 1
        for attempt in range(1, attempts + 1):
            after = None
            hdrs = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
            hdrs.update(headers or {})
            data = None
            if body is not None:
                data = json.dumps(body).encode("utf-8")
                hdrs["Content-Type"] = "application/json"
            stream = open(data_file, "rb") if data_file else None
            if stream:
                hdrs["Content-Length"] = str(os.fstat(stream.fileno()).st_size)
                data = stream
            request = urllib.request.Request(url, data=data, headers=hdrs, method=method)
            try:
                with urllib.request.urlopen(request, timeout=timeout) as res:
                    text = res.read().decode("utf-8")
                    return json.loads(text) if text else {}
            except urllib.error.HTTPError as err:
                try:
                    answer = json.loads(err.read().decode("utf-8") or "{}")
                except ValueError:
                    answer = {}
                if err.code == 409:
                    raise JobStopped(answer.get("reason", "lease_lost") if isinstance(answer, dict) else "lease_lost")
                if err.code == 429 or err.code >= 500:
                    after = retry_after(err.headers)
                if not (err.code == 429 or err.code >= 500) or attempt == attempts:
                    raise Refused(err.code, answer, what, after)
            except (urllib.error.URLError, OSError) as err:
                if attempt == attempts:
                    raise ConnectionError("%s: cannot reach the server (%s)" % (what, err))
            finally:
                if stream:
                    stream.close()
            backoff = min(5.0, 0.25 * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            time.sleep(min(self.max_retry_after, max(backoff, after or 0.0)))

    def claim(self, models, pool, worker_id, wait_ms=20000):
        body = {"models": models, "max": 1, "wait_ms": wait_ms, "worker_id": worker_id}
        if pool:
            body["pool"] = pool
        answer = self.call("claim", "POST", self.base + WORKER_API + "/claim", body, timeout=wait_ms / 1000 + 30, retry=False)
        return answer.get("jobs", [])

    def job_call(self, job, action, body):
        url = "%s%s/jobs/%s/%s" % (self.base, WORKER_API, urllib.parse.quote(job["id"], safe=""), action)
        return self.call(action, "POST", url, dict(body, lease_id=job["lease_id"]))

    def upload(self, job, name, path, content_type):
        url = "%s%s?lease_id=%s" % (self.rebase(job["upload_url"]), urllib.parse.quote(name), urllib.parse.quote(job["lease_id"]))
        return self.call("upload " + name, "PUT", url, headers={"Content-Type": content_type}, data_file=path, timeout=600)


# --------------------------------------------------------------------------- one job


class Heartbeat(threading.Thread):
    """Sends progress without a status every third of what is left of the lease."""

    def __init__(self, client, job):
        super().__init__(daemon=True)
        self.client, self.job = client, job
        self.expires = parse_time(job["lease_expires_at"])
        self.done = threading.Event()
        self.stopped = None  # the server's reason, once it said stop

    def extended(self, answer):
        if answer and answer.get("lease_expires_at"):
            self.expires = parse_time(answer["lease_expires_at"])

    def run(self):
        while not self.done.wait(min(60.0, max(0.1, (self.expires - time.time()) / 3))):
            try:
                self.extended(self.client.job_call(self.job, "progress", {}))
            except JobStopped as stop:
                self.stopped = stop.reason
                return
            except Exception as err:  # a missed beat only risks the lease
                log("heartbeat failed for %s: %s" % (self.job["id"], err))


def parse_time(iso):
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def run_job(client, job):
    log("job %s (%s, attempt %s) claimed" % (job["id"], job["model"], job.get("attempt")))
    beat = Heartbeat(client, job)
    beat.start()

    def progress(status):
        if beat.stopped:
            raise JobStopped(beat.stopped)
        beat.extended(client.job_call(job, "progress", {"status": status}))

    try:
        with tempfile.TemporaryDirectory(prefix="mediagen-job-") as out_dir:
            render = RENDERERS.get(job["model"])
            if render is None:
                raise LookupError("this worker has no renderer for " + job["model"])
            progress("processing")
            files = render(job["request"], out_dir, progress)
            if beat.stopped:
                raise JobStopped(beat.stopped)
            for f in files:
                client.upload(job, f["name"], os.path.join(out_dir, f["name"]), f["content_type"])
            outputs = [{k: v for k, v in f.items() if k != "content_type"} for f in files]
            client.job_call(job, "complete", {"outputs": outputs})
            log("job %s completed" % job["id"])
    except JobStopped as stop:
        log("job %s stopped by the server (%s)" % (job["id"], stop.reason))
    except Exception as err:
        # The client sees a fixed sentence; the details stay in this log.
        log("job %s failed: %r" % (job["id"], err))
        retryable = isinstance(err, ConnectionError)
        try:
            client.job_call(job, "fail", {"code": "engine_failed", "message": "the python worker failed to render the job", "retryable": retryable})
        except Exception as report:
            log("could not report the failure of %s: %s" % (job["id"], report))
    finally:
        beat.done.set()


# --------------------------------------------------------------------------- the loop


def log(line):
    sys.stderr.write("worker.py: %s\n" % line)
    sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description="A mediagen remote worker for the example custom models.")
    parser.add_argument("--server", default=os.environ.get("MEDIAGEN_URL"), help="the mediagen server (env MEDIAGEN_URL)")
    parser.add_argument("--token", default=os.environ.get("MEDIAGEN_WORKER_TOKEN"), help="a worker token (env MEDIAGEN_WORKER_TOKEN; prefer it)")
    parser.add_argument("--pool", default=None, help="claim only jobs of models bound to remote:POOL")
    parser.add_argument("--worker-id", default=socket.gethostname()[:100] or "python-worker", help="this instance's name")
    args = parser.parse_args()
    if not args.server or not args.token:
        parser.error("give --server (or MEDIAGEN_URL) and --token (or MEDIAGEN_WORKER_TOKEN)")

    client = Client(args.server, args.token)
    stopping = threading.Event()

    def on_signal(signum, _frame):
        log("stopping: finishing the job in hand, claiming no more")
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log("serving %s for %s" % (", ".join(RENDERERS), client.base))
    print("worker.py: ready", flush=True)

    failures = 0
    while not stopping.is_set():
        pause = 0.0
        try:
            # A short wait while stopping is likely: a signal interrupts nothing mid-call.
            jobs = client.claim(list(RENDERERS), args.pool, args.worker_id, wait_ms=5000)
            failures = 0
        except Refused as err:
            if err.status in (400, 401, 403):
                log(str(err))
                return 1
            failures += 1
            # A 429 or 503 says how long to leave the server alone (bounded).
            pause = min(MAX_CLAIM_PAUSE, err.retry_after or 0.0)
            jobs = []
        except (ConnectionError, OSError) as err:
            failures += 1
            if failures == 1 or failures % 10 == 0:
                log("claiming failed (%s); retrying" % err)
            jobs = []
        if failures:
            stopping.wait(max(pause, min(MAX_CLAIM_PAUSE, 0.5 * 2 ** min(failures - 1, 6))))
        for job in jobs:
            run_job(client, job)
    return 0


if __name__ == "__main__":
    sys.exit(main())
