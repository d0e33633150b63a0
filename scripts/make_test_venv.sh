#!/usr/bin/env bash
# The Python tests' venv: Debian's python3 with its packages (numpy, torch, pytest) plus the
# pinned test-only packages of python/tests/requirements-pyg.txt from PyPI. Made once; a venv
# whose requirements file changed is made again.
#   scripts/make_test_venv.sh VENV_DIR [PYTHON]   (default /usr/bin/python3)
set -euo pipefail
venv=$1
python=${2:-/usr/bin/python3}
requirements="$(dirname "$0")/../python/tests/requirements-pyg.txt"
if [[ -x "$venv/bin/python" ]] && cmp -s "$requirements" "$venv/requirements-pyg.txt"; then
  exit 0
fi
rm -rf "$venv.tmp"
"$python" -m venv --system-site-packages "$venv.tmp"
"$venv.tmp/bin/pip" install --quiet --disable-pip-version-check --no-deps \
  -r "$requirements" || {
  echo "strata: could not install the test-only packages of $requirements from PyPI" >&2
  exit 1
}
"$venv.tmp/bin/python" -c "import torch_geometric" >/dev/null
cp "$requirements" "$venv.tmp/requirements-pyg.txt"
rm -rf "$venv"
mv "$venv.tmp" "$venv"
