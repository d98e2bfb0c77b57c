"""OpenAI's Images and Models APIs called with nothing but Python's standard library (urllib),
as a second client that is not Node: the same requests as the SDK test, checked here.
BASE_URL (the server, without /v1) and TOKEN come from the environment; FAIL_BASE_URL and
FAIL_TOKEN name a sandbox server, where a prompt's marker fails the job (docs/sandbox.md). Prints
one line per check; exits 1 at the first that fails."""
import base64
import json
import os
import struct
import sys
import urllib.error
import urllib.request
import uuid

BASE = os.environ["BASE_URL"].rstrip("/") + "/v1"
TOKEN = os.environ["TOKEN"]
FAIL_BASE = os.environ["FAIL_BASE_URL"].rstrip("/") + "/v1"
FAIL_TOKEN = os.environ["FAIL_TOKEN"]
A2 = "image/vendor-a/model-a-2/medium"
B1 = "image/vendor-b/model-b-1"


def call(method, path, body=None, token=TOKEN, content_type="application/json", base=BASE):
    data = json.dumps(body).encode() if content_type == "application/json" and body is not None else body
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def png_size(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("not a PNG")
    return struct.unpack(">II", data[16:24])


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ((": " + str(detail)) if not ok else ""))
    if not ok:
        sys.exit(1)


def error_of(status, body, want_status, want_type, want_param=None, want_code=None):
    e = body.get("error") if isinstance(body, dict) else None
    return (
        status == want_status
        and isinstance(e, dict)
        and set(e) == {"message", "type", "param", "code"}
        and e["type"] == want_type
        and e["param"] == want_param
        and (want_code is None or e["code"] == want_code)
    )


status, body = call("POST", "/images/generations", {"model": "gpt-image-1", "prompt": "a lighthouse", "n": 2, "size": "1024x1024"})
check("generations by alias, n 2, url", status == 200 and len(body["data"]) == 2 and all("url" in d for d in body["data"]), body)
with urllib.request.urlopen(body["data"][0]["url"], timeout=60) as res:
    png_size(res.read())
check("the url serves a PNG", True)

status, body = call("POST", "/images/generations", {"model": B1, "prompt": "a fox", "size": "1024x1536", "response_format": "b64_json"})
image = base64.b64decode(body["data"][0]["b64_json"]) if status == 200 else b""
check("generations b64_json at width/height", status == 200 and png_size(image) == (1024, 1536), (status, body if status != 200 else png_size(image)))

boundary = uuid.uuid4().hex
parts = []
for name, value in (("model", A2), ("prompt", "make it blue"), ("response_format", "b64_json")):
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="in.png"\r\nContent-Type: image/png\r\n\r\n'.encode() + image + b"\r\n")
parts.append(f"--{boundary}--\r\n".encode())
status, body = call("POST", "/images/edits", b"".join(parts), content_type="multipart/form-data; boundary=" + boundary)
check("edits with a multipart file", status == 200 and png_size(base64.b64decode(body["data"][0]["b64_json"]))[0] > 0, body)

status, body = call("GET", "/models")
ids = [m["id"] for m in body.get("data", [])]
check("models list with aliases", status == 200 and body["object"] == "list" and "gpt-image-1" in ids and A2 in ids and "image/vendor-g/model-g-3" not in ids, body)

status, body = call("POST", "/images/generations", {"prompt": "x"}, token="mg_wrong")
check("401 in OpenAI's shape", error_of(status, body, 401, "invalid_request_error", None, "invalid_api_key"), (status, body))
status, body = call("POST", "/images/generations", {"model": A2, "prompt": "x", "size": "big"})
check("400 naming param size", error_of(status, body, 400, "invalid_request_error", "size"), (status, body))
status, body = call("POST", "/images/generations", {"model": A2, "prompt": "x", "colour": "red"})
check("400 naming an unknown param", error_of(status, body, 400, "invalid_request_error", "colour"), (status, body))
status, body = call("GET", "/models/image%2Fvendor-g%2Fmodel-g-3")
check("404 model_not_found for a retired model", error_of(status, body, 404, "invalid_request_error", "model", "model_not_found"), (status, body))
status, body = call("POST", "/images/generations", {"model": B1, "prompt": "a fox [mediagen:fail=input_fetch_failed]", "size": "512x512"}, token=FAIL_TOKEN, base=FAIL_BASE)
check("500 with the failed job's code", error_of(status, body, 500, "server_error", None, "input_fetch_failed"), (status, body))
print("all checks passed")
