# Sourced by the scripts that need Python packages from PyPI (nvrtc-env.sh, py-env.sh).
# make_venv DIR [NAME]: creates a virtual environment at DIR unless one is there,
# installing Debian's python3-venv first when it is missing (as root, or through
# password-less sudo); otherwise prints the exact command and fails.
make_venv() {
  local venv="$1" name="${2:-venv}"
  [ -x "$venv/bin/python" ] && return 0
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    local cmd="apt-get update && apt-get install -y --no-install-recommends python3-venv"
    echo "$name: python3 -m venv failed; installing python3-venv" >&2
    if [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >&2
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >&2
    else
      echo "$name: cannot install python3-venv without a password. Run:" >&2
      echo "  sudo sh -c '$cmd'" >&2
      return 1
    fi
    python3 -m venv "$venv" >&2
  fi
}
