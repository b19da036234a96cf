#!/usr/bin/env bash
# Installs the newest nats-server of Debian's archive into the project (.tools/, git-ignored)
# without touching the system's packages: apt reads a private source list and keeps its lists
# and cache in .tools/apt, `apt-get download` fetches the .deb, `dpkg-deb -x` unpacks it.
# Result: .tools/nats-server/<version>/nats-server and the stable link .tools/bin/nats-server,
# which the embedded manager and the test harness find (packages/server/src/embedded/binary.ts).
#
# Suite: sid, else trixie (both 2.10 or newer). Mirror: the Debian mirror the machine's own apt
# sources use; on Ubuntu (or anything whose sources name no Debian mirror) Debian's documented
# archive, http://deb.debian.org/debian. Release files are verified with Debian's archive
# keyring (/usr/share/keyrings/debian-archive-keyring.gpg, installed with apt if missing); when
# it lacks the key that signs sid, a newer debian-archive-keyring is fetched from trixie (which
# the installed keyring verifies) the same private way. Verification is never turned off.
#
# Idempotent: a working .tools/bin/nats-server is kept; TIDEMARK_NATS_REFRESH=1 looks for a newer
# one. The system's own nats-server (bookworm: 2.9.10 at /usr/sbin/nats-server, the floor) is
# installed by scripts/install.sh for the compatibility test leg.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS="$PWD/.tools"
APT_DIR="$TOOLS/apt"
LINK="$TOOLS/bin/nats-server"
MIN_MINOR=10 # 2.10: stream metadata, sync_interval, several filter subjects per consumer

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
version_of() { "$1" --version 2>/dev/null | sed -n 's/^nats-server: v\{0,1\}\([0-9][0-9.]*\).*/\1/p'; }
minor_of() { echo "$1" | cut -d. -f2; }

if [ -x "$LINK" ] && [ -z "${TIDEMARK_NATS_REFRESH:-}" ] && have="$(version_of "$LINK")" && [ -n "$have" ]; then
  echo "nats-server $have in .tools/bin (TIDEMARK_NATS_REFRESH=1 to look for a newer one)"
  exit 0
fi

# The Debian mirror of the machine's own sources (one-line .list and deb822 .sources files).
debian_mirror() {
  . /etc/os-release 2>/dev/null || true
  if [ "${ID:-}" = debian ]; then
    local uri
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
      sed -n -e 's/^[[:space:]]*URIs:[[:space:]]*//p' -e 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\{0,1\}\([^[:space:]]\+\).*/\2/p' |
      tr ' ' '\n' | grep -E '^https?://.*/debian/?$' | head -n 1 || true)"
    if [ -n "$uri" ]; then echo "${uri%/}"; return; fi
  fi
  # Ubuntu's sources name Ubuntu's archive, which has no sid/trixie: use Debian's own archive.
  echo "http://deb.debian.org/debian"
}

KEYRING="${TIDEMARK_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}" # override: tests of the fallback
if [ ! -s "$KEYRING" ]; then
  echo "installing debian-archive-keyring with apt-get (verifies Debian's release files)"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq debian-archive-keyring >/dev/null
fi

MIRROR="$(debian_mirror)"
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/deb" "$TOOLS/bin"

# apt with a private source list, lists, cache and state: the system's apt is not touched.
# As root, apt would download as its _apt user, who may not reach the project directory: it
# then downloads as root anyway, with a warning; say so up front instead.
SANDBOX=()
[ "$(id -u)" = 0 ] && SANDBOX=(-o APT::Sandbox::User=root)
private_apt() {
  local suite="$1" keyring="$2"; shift 2
  echo "deb [signed-by=$keyring] $MIRROR $suite main" >"$APT_DIR/sources.list"
  apt-get -qq "${SANDBOX[@]}" -o Dir::Etc::sourcelist="$APT_DIR/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$APT_DIR/lists" -o Dir::Cache="$APT_DIR/cache" \
    -o Dir::State::extended_states="$APT_DIR/extended_states" "$@"
}

# A newer keyring from trixie (verified by the installed one), for a sid signed by a newer key.
newer_keyring() {
  private_apt trixie "$KEYRING" update --error-on=any >&2 || return 1
  (cd "$APT_DIR/deb" && rm -f debian-archive-keyring_*.deb && private_apt trixie "$KEYRING" download debian-archive-keyring/trixie) >&2 || return 1
  rm -rf "$APT_DIR/keyring" && dpkg-deb -x "$APT_DIR"/deb/debian-archive-keyring_*.deb "$APT_DIR/keyring" || return 1
  echo "$APT_DIR/keyring/usr/share/keyrings/debian-archive-keyring.gpg"
}

fetch_from() {
  local suite="$1" keyring="$KEYRING"
  if ! private_apt "$suite" "$keyring" update --error-on=any 2>"$APT_DIR/update.err"; then
    if grep -qE 'NO_PUBKEY|not signed|EXPKEYSIG' "$APT_DIR/update.err"; then
      echo "Debian's $suite is signed by a key the installed keyring lacks: fetching a newer keyring from trixie"
      keyring="$(newer_keyring)" || return 1
      private_apt "$suite" "$keyring" update --error-on=any || return 1
    else
      cat "$APT_DIR/update.err" >&2
      return 1
    fi
  fi
  (cd "$APT_DIR/deb" && rm -f nats-server_*.deb && private_apt "$suite" "$keyring" download "nats-server/$suite") || return 1
  local unpacked="$APT_DIR/unpacked"
  rm -rf "$unpacked" && dpkg-deb -x "$APT_DIR"/deb/nats-server_*.deb "$unpacked"
  local version
  version="$(version_of "$unpacked/usr/sbin/nats-server")"
  if [ -z "$version" ] || [ "$(minor_of "$version")" -lt "$MIN_MINOR" ]; then
    echo "$suite's nats-server is '${version:-unreadable}', older than 2.$MIN_MINOR" >&2
    return 1
  fi
  mkdir -p "$TOOLS/nats-server/$version"
  # A version already in place is kept (running servers may use it); a new one goes beside it.
  [ -x "$TOOLS/nats-server/$version/nats-server" ] || install -m 0755 "$unpacked/usr/sbin/nats-server" "$TOOLS/nats-server/$version/nats-server"
  ln -sfn "../nats-server/$version/nats-server" "$LINK"
  rm -rf "$unpacked"
  echo "nats-server $version from Debian $suite ($MIRROR) in .tools/bin"
}

fetch_from sid || { echo "sid failed; trying trixie"; fetch_from trixie; } || {
  echo "could not install a current nats-server from Debian's archive ($MIRROR); the system's nats-server (if any) stays in use" >&2
  exit 1
}
