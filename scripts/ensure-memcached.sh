#!/usr/bin/env bash
# Makes sure a memcached binary is on the machine, for the Memcached store tests
# (they start their own server on a free loopback port, or use MEMCACHED_SERVERS).
# Installs Debian's package when it is missing and we are root; otherwise says why not.
set -euo pipefail
if command -v memcached >/dev/null 2>&1 || [ -x /usr/bin/memcached ]; then exit 0; fi
if [ -n "${MEMCACHED_SERVERS:-}" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "memcached is missing: installing Debian's package (apt-get install memcached)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached >/dev/null; }
  # The package may start a system service on 11211; the tests start their own servers, so stop it.
  (service memcached stop || pkill -x memcached) >/dev/null 2>&1 || true
  exit 0
fi
echo "memcached is missing and cannot be installed here (not root or no apt-get): install it, or set MEMCACHED_SERVERS" >&2
exit 0
