#!/usr/bin/env bash
# Build the virtualenv of the interop peers (pypaimon 2.1.0 + pypaimon-rust 0.4.0) used by
# tests/interop, plus deltalake 1.5.1 (delta-rs) for the bench's delta cases (bench/cases_delta.py).
# They cannot live in the project venv: pypaimon pins pyarrow<20 (so deltalake is pinned to its
# newest release that accepts it).
#
#   scripts/setup_peers.sh            -> prints the venv path on stdout (logs go to stderr)
#
# Venv: ${PAIMON_PEERS_VENV:-<repo>/.cache/peers-venv}; interpreter: ${PAIMON_PEERS_BASE_PYTHON:-python3.11}.
# Idempotent: a venv whose stored hash matches tests/interop/requirements-peers.txt is reused at
# once; otherwise it is rebuilt from scratch with exactly the pinned packages (--no-deps, then
# `pip check`, so an incomplete pin list fails here instead of resolving something new).
# The new venv is built beside the old one and moved into place only once it passed its checks,
# so processes using the old one keep working while it builds (and a failed build leaves it).
# Concurrent runs are serialized with flock.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$repo/tests/interop/requirements-peers.txt"
venv="${PAIMON_PEERS_VENV:-$repo/.cache/peers-venv}"
base_python="${PAIMON_PEERS_BASE_PYTHON:-python3.11}"
stamp="$venv/.requirements.sha256"

log() { printf '[setup_peers] %s\n' "$*" >&2; }

[[ -f "$req" ]] || { log "missing $req"; exit 1; }
want="$(sha256sum "$req" | cut -d' ' -f1)"

is_current() {
    [[ -x "$venv/bin/python" && -f "$stamp" ]] && [[ "$(cut -d' ' -f1 "$stamp")" == "$want" ]] \
        && "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null
}

if is_current; then
    echo "$venv"
    exit 0
fi

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi
if is_current; then  # built by a concurrent run while we waited for the lock
    echo "$venv"
    exit 0
fi

if ! command -v "$base_python" >/dev/null 2>&1; then
    log "cannot find $base_python (set PAIMON_PEERS_BASE_PYTHON to a Python 3.11 interpreter)"
    exit 1
fi
if ! "$base_python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    log "$base_python is $("$base_python" -V 2>&1), need Python 3.11"
    exit 1
fi

start=$SECONDS
build="$venv.build"
log "building $venv with $("$base_python" -V 2>&1) from $req"
rm -rf "$build"
"$base_python" -m venv "$build"
# Unset things that would make pip install into / resolve against another environment.
env -u PYTHONPATH -u PIP_USER -u PIP_REQUIRE_VIRTUALENV PYTHONNOUSERSITE=1 \
    "$build/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --no-deps --only-binary=:all: -r "$req" >&2
PYTHONNOUSERSITE=1 "$build/bin/python" -m pip check --disable-pip-version-check >&2
check_imports() {
    PYTHONNOUSERSITE=1 "$1/bin/python" - >&2 <<'EOF'
import importlib.metadata as md
import pyarrow, pypaimon, pypaimon_rust.datafusion  # noqa: F401
from pypaimon import CatalogFactory, Schema  # noqa: F401
from deltalake import DeltaTable, write_deltalake  # noqa: F401
print("[setup_peers] ok: pypaimon %s, pypaimon-rust %s, deltalake %s, pyarrow %s"
      % (md.version("pypaimon"), md.version("pypaimon-rust"), md.version("deltalake"), pyarrow.__version__))
EOF
}
check_imports "$build"
echo "$want  requirements-peers.txt" > "$build/.requirements.sha256"
# Swap: the venv's interpreter finds its prefix from pyvenv.cfg beside it, so it works moved.
if [[ -e "$venv" ]]; then
    mv "$venv" "$venv.old.$$"
fi
mv "$build" "$venv"
rm -rf "$venv.old.$$"
check_imports "$venv"
log "done in $((SECONDS - start))s"
echo "$venv"
