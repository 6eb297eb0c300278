#!/bin/sh
# Runs the command given inside a private D-Bus session with a fresh,
# unlocked GNOME Keyring (the freedesktop Secret Service QtKeychain talks
# to), in a temporary HOME: a test stores and reads API keys for real
# without touching the user's keyring, and leaves nothing behind.
set -eu
for tool in dbus-run-session gnome-keyring-daemon; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "keyring_session: $tool not found: run installer/setup-debian.sh (packages dbus, gnome-keyring)" >&2
    exit 1
  fi
done
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_DATA_HOME="$home/share"
mkdir -p "$XDG_DATA_HOME/keyrings"
dbus-run-session -- sh -c '
  printf "workbench-test" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null 2>&1
  exec "$@"' keyring_session "$@"
