#!/usr/bin/env bash
# Installs, on a fresh Debian or Ubuntu machine, what the build needs and what the tests run as
# their real counterparts; packages already there are left alone.
#   zlib1g-dev, libssl-dev, libhttp-parser-dev, libcurl4-openssl-dev, pkg-config: the C libraries
#   the build links.
#   util-linux: prlimit, for the test of a server out of file descriptors.
#   haproxy, openssl, curl: the test of TLS terminated in front of the HTTP listener.
#   prometheus_client (Python): the real parser the /metrics tests read the metrics with.
#   standardwebhooks (Python, from PyPI; Debian packages none): the reference verifier of the
#   signatures on the webhooks the outbox's tests receive (Tests/Support/webhook_receiver.py).
#   aiosmtpd (Python; Debian's python3-aiosmtpd, or PyPI's when the python3 on the PATH is not
#   Debian's own): the real SMTP server the mail tests send to (Tests/Support/smtp_mailbox.py).
set -euo pipefail

need=()
# chromium: the real browser the tests of the buyer's web pages open them in, with JavaScript off
# (GatehouseTesting's HeadlessChromium; those tests skip only when it is missing).
dpkg -s chromium >/dev/null 2>&1 || need+=(chromium)
for package in zlib1g-dev libssl-dev libhttp-parser-dev libcurl4-openssl-dev pkg-config util-linux haproxy openssl curl; do
    dpkg -s "$package" >/dev/null 2>&1 || need+=("$package")
done
python_module=true
python3 -c "import prometheus_client" >/dev/null 2>&1 || python_module=false
if ! $python_module && ! python3 -m pip --version >/dev/null 2>&1; then
    need+=(python3-prometheus-client)
fi
if ! python3 -c "import standardwebhooks" >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
    need+=(python3-pip)
fi
if ! python3 -c "import aiosmtpd" >/dev/null 2>&1; then
    dpkg -s python3-aiosmtpd >/dev/null 2>&1 || need+=(python3-aiosmtpd)
fi
if [ ${#need[@]} -gt 0 ]; then
    echo "install-packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
if ! python3 -c "import prometheus_client" >/dev/null 2>&1; then
    echo "install-packages: prometheus_client (pip)"
    python3 -m pip install -q --disable-pip-version-check prometheus_client
fi
if ! python3 -c "import standardwebhooks" >/dev/null 2>&1; then
    echo "install-packages: standardwebhooks (pip)"
    # A Debian python3 refuses pip installs outside a virtual environment unless told otherwise.
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check standardwebhooks
fi
# Debian's package serves Debian's python3; another python3 on the PATH takes it from PyPI.
if ! python3 -c "import aiosmtpd" >/dev/null 2>&1; then
    echo "install-packages: aiosmtpd (pip)"
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check aiosmtpd
fi
