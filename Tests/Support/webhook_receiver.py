"""A Standard Webhooks receiver for the outbox's tests (run by GatehouseTesting's WebhookReceiver).

Serves HTTP/1.1 on 127.0.0.1 at a free port, printed as the first line of standard output. Every
POST to a path other than the two below is checked with the `standardwebhooks` package against
each `--secret`, recorded, and answered per the script:

  POST /_control     {"answers": [{"status": 500}, {"status": 200, "retry_after": 7, "delay_ms": 0,
                      "body": "..."}], "default": {"status": 200}, "now": 1767225600}
                     `answers` are taken one per request, then `default`. `now` (unix seconds, or
                     null for the real time) is the time signatures' timestamps are checked
                     against, for a server whose test clock has moved.
  GET /_deliveries   every recorded request as JSON, oldest first.

Exits when its parent does, so a test process that dies leaves no receiver behind.
"""

import argparse
import base64
import json
import os
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks.webhooks as standard
from standardwebhooks import Webhook


class VerificationClock(datetime):
    """The library reads `datetime.now` to check a timestamp's age; this one can be set."""

    unix_seconds = None

    @classmethod
    def now(cls, tz=None):
        fixed = cls.unix_seconds
        return datetime.now(tz) if fixed is None else datetime.fromtimestamp(fixed, tz)


standard.datetime = VerificationClock


class Receiver:
    def __init__(self, secrets):
        self.secrets = secrets
        self.lock = threading.Lock()
        self.answers = []
        self.default = {"status": 200}
        self.deliveries = []

    def control(self, script):
        with self.lock:
            if "answers" in script:
                self.answers = list(script["answers"])
            if "default" in script:
                self.default = script["default"]
            if "now" in script:
                VerificationClock.unix_seconds = script["now"]

    def record(self, path, headers, body):
        """Records a delivery and answers the script's next answer for it."""
        verdicts = [self.verdict(secret, headers, body) for secret in self.secrets]
        entry = {
            "path": path,
            "webhook_id": headers.get("webhook-id"),
            "webhook_timestamp": headers.get("webhook-timestamp"),
            "webhook_signature": headers.get("webhook-signature"),
            "authorization": headers.get("authorization"),
            "content_type": headers.get("content-type"),
            "verified": [error is None for error in verdicts],
            "errors": verdicts,
            "body": body.decode("utf-8", errors="replace"),
            "body_base64": base64.b64encode(body).decode("ascii"),
        }
        with self.lock:
            answer = self.answers.pop(0) if self.answers else self.default
            entry["order"] = len(self.deliveries) + 1
            entry["status"] = answer.get("status", 200)
            self.deliveries.append(entry)
        return answer

    @staticmethod
    def verdict(secret, headers, body):
        """None when the signature verifies with `secret`, else why not."""
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
            return None
        except Exception as error:  # the library's own errors, and a body that is not UTF-8
            return f"{type(error).__name__}: {error}"

    def recorded(self):
        with self.lock:
            return list(self.deliveries)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    receiver = None

    def do_GET(self):
        if self.path == "/_deliveries":
            self.reply(200, json.dumps(self.receiver.recorded()), content_type="application/json")
        else:
            self.reply(404, "")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_control":
            self.receiver.control(json.loads(body))
            self.reply(200, "{}", content_type="application/json")
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = self.receiver.record(self.path, headers, body)
        time.sleep(answer.get("delay_ms", 0) / 1000)
        extra = [] if answer.get("retry_after") is None else [("Retry-After", str(answer["retry_after"]))]
        try:
            self.reply(answer.get("status", 200), answer.get("body", ""), headers=extra)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the sender gave up waiting (a timeout under test)

    def reply(self, status, text, content_type="text/plain", headers=()):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass


def exit_with_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", action="append", default=[], required=True)
    arguments = parser.parse_args()
    Handler.receiver = Receiver(arguments.secret)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=exit_with_parent, daemon=True).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
