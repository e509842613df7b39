"""A real ``ragbench serve`` process on a free loopback port, and token helpers."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

#: The serve extra; a module importing these helpers is skipped with the install line when it is missing.
REASON = 'the serve extra is not installed: pip install "ragbench[serve]"'
for _module in ("fastapi", "uvicorn", "prometheus_client"):
    pytest.importorskip(_module, reason=REASON)
jwt = pytest.importorskip("jwt", reason=REASON)
ROOT = Path(__file__).resolve().parents[2]
SECRET = "test-secret-" + "x" * 40
FAST = ["--set", "embedding.model=hashing", "--set", "answer.extractive_semantic=false"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def token(sub: str = "alice", roles: Any = ("employee",), departments: Any = ("hr",), clearance: Any = "Confidential",
          ttl: int = 600, secret: str = SECRET, alg: str = "HS256", key: Any = None, drop: tuple[str, ...] = (),
          **extra: Any) -> str:
    claims = {"sub": sub, "roles": list(roles) if isinstance(roles, (list, tuple)) else roles,
              "departments": list(departments) if isinstance(departments, (list, tuple)) else departments,
              "clearance": clearance, "exp": int(time.time()) + ttl, **extra}
    for name in drop:
        claims.pop(name, None)
    return jwt.encode(claims, key if key is not None else secret, algorithm=alg)


def bearer(tok: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok}"}


class Server:
    """``with Server(tmp, args) as s:`` starts ``python -m ragbench.cli serve`` in ``tmp`` and waits for /readyz."""

    def __init__(self, workdir: Path, args: list[str], env: dict[str, str] | None = None,
                 ready_timeout: float = 180) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.args = args
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGBENCH_JWT_SECRET": SECRET, **(env or {})}
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.ready_timeout = ready_timeout
        self.log_path = workdir / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.base = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        cmd = [sys.executable, "-m", "ragbench.cli", "serve", "--port", str(self.port), "--quiet", *self.args]
        self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=self.env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.base + "/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"server not ready within {self.ready_timeout} s:\n{self.log()}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_records(self) -> list[dict[str, Any]]:
        """The server's JSON log lines (other lines, e.g. the startup banner, are skipped)."""
        out = []
        for line in self.log().splitlines():
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=60, **kw)
