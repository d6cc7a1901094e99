"""A real SMTP server and a real Maildir reader for the mail tests (run by GatehouseTesting's SMTPMailbox).

  smtp_mailbox.py serve ARGUMENTS...
      Runs aiosmtpd's command line, as `python3 -m aiosmtpd ARGUMENTS...` does, until stopped or
      until its parent exits (so a test process that dies leaves no server behind). With
      `-c __main__.ScriptedMailbox DIR` it stores every message in the Maildir DIR, as
      aiosmtpd.handlers.Mailbox does, except that it answers RCPT for a recipient whose name
      starts with `deferred` with 451 (a server that says "not now") and one whose name starts
      with `refused` with 550 (no such user).

  smtp_mailbox.py read DIR
      Prints every message of the Maildir DIR as a JSON list, oldest first, parsed with Python's
      `email` package (policy.default): its headers with their encoded words decoded, and the
      decoded content of its text/plain and text/html parts.
"""

import json
import mailbox
import os
import re
import sys
import threading
import time
from email import policy
from email.parser import BytesParser

from aiosmtpd.handlers import Mailbox
from aiosmtpd.main import main as aiosmtpd_main


class ScriptedMailbox(Mailbox):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        name = address.split("@", 1)[0]
        if name.startswith("deferred"):
            return "451 4.3.0 Try again later"
        if name.startswith("refused"):
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def exit_with_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def arrival(key):
    """Maildir names start with the delivery's seconds, then M and its microseconds."""
    seconds, _, rest = key.partition(".")
    micros = re.match(r"M(\d+)", rest)
    return (int(seconds) if seconds.isdigit() else 0, int(micros.group(1)) if micros else 0, key)


def header(message, name):
    value = message.get(name)
    return None if value is None else str(value)


def part(message, subtype):
    body = message.get_body(preferencelist=(subtype,))
    if body is None or body.get_content_subtype() != subtype:
        return None
    return {
        "content": body.get_content(),
        "content_type": header(body, "Content-Type"),
        "transfer_encoding": header(body, "Content-Transfer-Encoding"),
    }


def read(directory):
    box = mailbox.Maildir(directory, factory=None, create=False)
    messages = []
    for key in sorted(box.keys(), key=arrival):
        raw = box.get_bytes(key)
        message = BytesParser(policy=policy.default).parsebytes(raw)
        messages.append({
            "headers": [[name, str(value)] for name, value in message.items()],
            "content_type": message.get_content_type(),
            "text": part(message, "plain"),
            "html": part(message, "html"),
            "longest_line_octets": max(len(line.rstrip(b"\r")) for line in raw.split(b"\n")),
            "defects": [type(defect).__name__ for item in message.walk() for defect in item.defects],
        })
    json.dump(messages, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        threading.Thread(target=exit_with_parent, daemon=True).start()
        aiosmtpd_main(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        sys.exit(__doc__)
