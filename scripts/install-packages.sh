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
