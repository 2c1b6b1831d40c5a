#!/usr/bin/env bash
# Fetch what the cuda build needs — cuda.h and the libcuda.so link stub — from
# Debian's non-free nvidia-cuda-dev package into the ignored folder .cache/cuda/.
#
# Idempotent: does nothing when both files are already there. Never edits the
# system's apt sources or lists: apt gets a private source list, lists folder and
# cache under .cache/cuda/apt/ (-o Dir::Etc::SourceList=... -o Dir::State::Lists=...).
# Needs network access to deb.debian.org only; no root.
#
# Prints the folder it unpacked into on its last line (usr/include/cuda.h, usr/lib/x86_64-linux-gnu/stubs/).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD/.cache/cuda"
inc="$root/usr/include/cuda.h"
stub="$root/usr/lib/x86_64-linux-gnu/stubs/libcuda.so"
if [ -s "$inc" ] && [ -s "$stub" ]; then
  echo "$root"
  exit 0
fi

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt="$root/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$root/deb"
echo "deb [signed-by=$keyring] $mirror $codename non-free" >"$apt/sources.list"
opts=(
  -o "Dir::Etc::SourceList=$apt/sources.list"
  -o "Dir::Etc::SourceParts=$apt/sources.list.d"
  -o "Dir::State::Lists=$apt/lists"
  -o "Dir::Cache=$apt/cache"
  -o "APT::Architecture=amd64"
  -o "APT::Architectures=amd64"
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
)
# The mirror answers 503 at times: apt-get update then warns and keeps no list, and the download
# finds no package. Both are tried again, 4 times in all, 10, 30 and 60 s apart.
fetched=""
for wait in 0 10 30 60; do
  if [ "$wait" -gt 0 ]; then
    echo "fetch-cuda-headers: trying again in $wait s" >&2
    sleep "$wait"
  fi
  echo "fetch-cuda-headers: apt-get update ($codename non-free, private lists in $apt)" >&2
  apt-get "${opts[@]}" -qq update >&2 || continue
  echo "fetch-cuda-headers: apt-get download nvidia-cuda-dev (large: about 0.8 GB)" >&2
  if (cd "$root/deb" && rm -f nvidia-cuda-dev_*.deb && apt-get "${opts[@]}" -qq download nvidia-cuda-dev >&2); then
    fetched=1
    break
  fi
done
[ -n "$fetched" ] || { echo "fetch-cuda-headers: nvidia-cuda-dev could not be downloaded from $mirror" >&2; exit 100; }
deb=$(ls "$root"/deb/nvidia-cuda-dev_*.deb | head -1)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" \
  ./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
basename "$deb" >"$root/VERSION"
rm -f "$deb"
[ -s "$inc" ] && [ -s "$stub" ] || { echo "fetch-cuda-headers: extraction failed" >&2; exit 2; }
echo "$root"
