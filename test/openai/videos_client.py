#!/usr/bin/env python3
"""OpenAI's Videos API from a second, non-Node client: plain urllib, no SDK.

Speaks the requests OpenAI's API reference gives for /v1/videos (create as JSON and as
multipart/form-data with `input_reference`, retrieve, content with `variant`, list with `after`,
`limit` and `order`, delete) against a running mediagen, and checks the answers. Every check that
fails raises; on success one JSON line reports what was seen, for the calling test to check again.

    python3 videos_client.py BASE_URL TOKEN MODEL IMAGE_PATH
    (BASE_URL ends in /v1)
"""
import json
import sys
import time
import urllib.error
import urllib.request
import uuid

BASE, TOKEN, MODEL, IMAGE = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4]


def call(method, path, body=None, content_type=None, headers=None):
    """One request; returns (status, headers, bytes). HTTP errors are answers too."""
    h = {"Authorization": "Bearer " + TOKEN}
    if content_type:
        h["Content-Type"] = content_type
    h.update(headers or {})
    req = urllib.request.Request(BASE + path, data=body, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, res.headers, res.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def json_call(method, path, payload=None, headers=None):
    body = None if payload is None else json.dumps(payload).encode()
    status, hdrs, data = call(method, path, body, "application/json" if body is not None else None, headers)
    return status, json.loads(data) if data else None


def multipart(fields, files):
    """multipart/form-data as RFC 7578 writes it: fields, then files with a filename and type."""
    boundary = "----mediagen-" + uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary, name, value)).encode())
    for name, (filename, ctype, data) in files.items():
        head = '--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\nContent-Type: %s\r\n\r\n' % (boundary, name, filename, ctype)
        parts.append(head.encode() + data + b"\r\n")
    parts.append(("--%s--\r\n" % boundary).encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def is_video(v):
    return v.get("object") == "video" and isinstance(v.get("id"), str) and v.get("status") in ("queued", "in_progress", "completed", "failed")


def wait_done(vid):
    deadline = time.time() + 150
    while time.time() < deadline:
        status, v = json_call("GET", "/videos/" + vid)
        check(status == 200 and is_video(v), "retrieve answered %s %s" % (status, v))
        check(0 <= v["progress"] <= 100, "progress %s" % v["progress"])
        if v["status"] in ("completed", "failed"):
            return v
        time.sleep(0.2)
    raise AssertionError("video %s did not end" % vid)


report = {}

# Create as JSON.
status, created = json_call("POST", "/videos", {"model": MODEL, "prompt": "a paper boat on a pond", "seconds": "4", "size": "1280x720"})
check(status == 200 and is_video(created), "create answered %s %s" % (status, created))
check(created["status"] == "queued" and created["completed_at"] is None, "created %s" % created)
done = wait_done(created["id"])
check(done["status"] == "completed" and done["progress"] == 100 and isinstance(done["completed_at"], int), "ended %s" % done)
report["json"] = {"id": done["id"], "seconds": done["seconds"], "size": done["size"], "model": done["model"]}

# The MP4, and its thumbnail.
status, hdrs, mp4 = call("GET", "/videos/%s/content" % done["id"])
check(status == 200 and hdrs.get("Content-Type", "").startswith("video/mp4"), "content answered %s %s" % (status, hdrs.get("Content-Type")))
check(mp4[4:8] == b"ftyp", "the content is no MP4: %r" % mp4[:12])
report["mp4_bytes"] = len(mp4)
status, hdrs, webp = call("GET", "/videos/%s/content?variant=thumbnail" % done["id"])
check(status == 200 and webp[:4] == b"RIFF" and webp[8:12] == b"WEBP", "thumbnail answered %s %r" % (status, webp[:12]))
report["thumbnail_bytes"] = len(webp)

# Create as multipart with a file as input_reference.
with open(IMAGE, "rb") as f:
    image = f.read()
body, ctype = multipart({"model": MODEL, "prompt": "the boat sails off", "seconds": "4"}, {"input_reference": ("first.png", "image/png", image)})
status, hdrs, data = call("POST", "/videos", body, ctype)
ref = json.loads(data)
check(status == 200 and is_video(ref), "multipart create answered %s %s" % (status, ref))
report["multipart"] = {"id": ref["id"], "status": ref["status"]}

# List: oldest first, one per page, following last_id as `after`.
seen, after = [], None
for _ in range(10):
    status, page = json_call("GET", "/videos?limit=1&order=asc" + ("&after=" + after if after else ""))
    check(status == 200 and page["object"] == "list" and len(page["data"]) <= 1, "list answered %s %s" % (status, page))
    seen += [v["id"] for v in page["data"]]
    if not page["has_more"]:
        break
    after = page["last_id"]
report["listed_asc"] = seen

# Refusals in OpenAI's error shape.
status, err = json_call("GET", "/videos/" + str(uuid.uuid4()))
check(status == 404 and err["error"]["type"] == "invalid_request_error" and err["error"]["message"], "unknown video answered %s %s" % (status, err))
status, err = json_call("POST", "/videos", {"model": MODEL, "prompt": "x", "seconds": "5"})
check(status == 400 and err["error"]["param"] == "seconds", "bad seconds answered %s %s" % (status, err))
report["errors"] = "ok"

# Delete (the multipart one, queued or running: it is cancelled first), then it is gone.
status, gone = json_call("DELETE", "/videos/" + ref["id"])
check(status == 200 and gone == {"id": ref["id"], "object": "video.deleted", "deleted": True}, "delete answered %s %s" % (status, gone))
status, _ = json_call("GET", "/videos/" + ref["id"])
check(status == 404, "a deleted video answered %s" % status)
report["deleted"] = ref["id"]

print(json.dumps(report))
