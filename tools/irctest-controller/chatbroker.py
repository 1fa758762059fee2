"""The irctest controller for chatbroker (run by tools/irctest).

irctest (github.com/progval/irctest) is not part of this repository: this
module is loaded from its checkout with ``--controller chatbroker``. It
starts the chatbroker binary named by $CHATBROKER on a temporary state
directory and connects every test client over the IRC Unix socket
(irc.sock) as the Unix user its nick names, since on chatbroker the nick
is the login name (chatbroker(7), "Identity"): the test process runs as
root and takes that user's uid and gid for the connect(2), so the kernel's
SO_PEERCRED names the user. Users that do not exist are created
(useradd --badname, comment "chatbroker irctest"; tools/irctest removes
them at its end). A client that irctest connects without connectClient's
nick (addClient, then its own NICK line) is connected when it first sends
NICK, as the user that NICK names, as a person runs their IRC client with
their login name for a nick; the lines before it wait for that connect.
One that reads before sending NICK (CAP LS first) connects then, as the
user "irctest". The broker is told nothing of this: its clients' nicks are
what SO_PEERCRED says, as for any client.
"""

import os
import pwd
import shutil
import socket
import subprocess
import time
from typing import Optional, Type

from irctest import cases, client_mock
from irctest.basecontrollers import BaseServerController, DirectoryBasedController
from irctest.runner import NotImplementedByController

DEFAULT_USER = "irctest"
COMMENT = "chatbroker irctest"

# The nick the client being connected registers with (connectClient).
_next_nick: list = [None]


def _unix_user(name: str) -> Optional[pwd.struct_passwd]:
    """The Unix user named `name`, created when missing; None if it cannot be."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    result = subprocess.run(
        ["useradd", "--badname", "--no-create-home", "--user-group",
         "--shell", "/usr/sbin/nologin", "--comment", COMMENT, name],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if result.returncode != 0:
        return None
    return pwd.getpwnam(name)


_original_connect_client = cases.BaseServerTestCase.connectClient


def _connect_client(self, nick, *args, **kwargs):
    _next_nick[0] = nick
    try:
        return _original_connect_client(self, nick, *args, **kwargs)
    finally:
        _next_nick[0] = None


_original_connect = client_mock.ClientMock.connect


def _connect(self, hostname: str, port: int) -> None:
    path = ChatbrokerController.irc_socket
    if path is None:
        return _original_connect(self, hostname, port)
    if _next_nick[0] is None:
        self.conn = _Pending(self, path)
        return
    _connect_as(self, path, _next_nick[0])


class _Pending:
    """A client's socket before its first NICK: lines are held until NICK
    names the Unix user to connect as (or a read needs the connection)."""

    def __init__(self, client, path: str) -> None:
        self.client = client
        self.path = path
        self.held = b""

    def _open(self, name: str):
        _connect_as(self.client, self.path, name)
        conn = self.client.conn
        if self.held:
            conn.sendall(self.held)
        return conn

    def sendall(self, data: bytes):
        self.held += data
        for line in self.held.split(b"\r\n")[:-1]:
            words = line.split(b" ")
            if len(words) > 1 and words[0].upper() == b"NICK" and words[1]:
                name = words[1].lstrip(b":").decode(errors="replace")
                self._open(name)
                return None
        return None

    def __getattr__(self, attribute):
        # recv, settimeout, close...: the connection is needed now.
        return getattr(self._open(DEFAULT_USER), attribute)


class _UnixConnection(socket.socket):
    """A Unix stream socket that writes as irctest's TCP sockets do: a
    write after the broker closed its end is lost, not an error. On TCP the
    first write after the peer's close succeeds and the client then reads
    what was sent before it (a QUIT's ERROR, say); on a Unix socket it
    fails at once with EPIPE, and irctest's PING after a QUIT would fail
    the test before it could read the ERROR it checks for."""

    def sendall(self, data, *args):
        try:
            return super().sendall(data, *args)
        except BrokenPipeError:
            return None


def _connect_as(self, path: str, name: str) -> None:
    entry = _unix_user(name) or _unix_user(DEFAULT_USER)
    self.conn = _UnixConnection(socket.AF_UNIX, socket.SOCK_STREAM)
    self.conn.settimeout(self.socket_timeout)
    os.setegid(entry.pw_gid)
    os.seteuid(entry.pw_uid)
    try:
        self.conn.connect(path)
    finally:
        os.seteuid(0)
        os.setegid(0)


cases.BaseServerTestCase.connectClient = _connect_client
client_mock.ClientMock.connect = _connect


class ChatbrokerController(BaseServerController, DirectoryBasedController):
    software_name = "chatbroker"
    supported_sasl_mechanisms: set = set()
    supports_sts = False
    # The IRC socket of the broker running now, for the clients.
    irc_socket: Optional[str] = None

    def run(self, hostname, port, *, password, ssl, run_services, faketime,
            websocket_hostname, websocket_port) -> None:
        if ssl:
            raise NotImplementedByController("TLS")
        if websocket_hostname is not None or websocket_port is not None:
            raise NotImplementedByController("Websocket")
        if run_services:
            raise NotImplementedByController("services")
        if password is not None:
            raise NotImplementedByController("PASS")
        assert self.proc is None
        self.port = port
        self.hostname = hostname
        self.create_config()
        assert self.directory
        os.chmod(self.directory, 0o755)
        state = self.directory / "state"
        os.mkdir(state, 0o700)
        ChatbrokerController.irc_socket = str(self.directory / "irc.sock")
        self.proc = self.execute([
            os.environ.get("CHATBROKER", "chatbroker"),
            "--socket", str(self.directory / "chat.sock"),
            "--irc-socket", ChatbrokerController.irc_socket,
            "--state-dir", str(state),
            "--new-rooms-per-minute", "1000",
            # The name irctest's tests expect in 312 and elsewhere.
            "--server-name", "My.Little.Server",
        ])
        # irctest does not stop every server it starts (a test that fails
        # in its set-up leaves one): tools/irctest stops those named here.
        pids = os.environ.get("CHATBROKER_PIDS")
        if pids:
            with open(pids, "a") as listed:
                listed.write(f"{self.proc.pid}\n")

    def wait_for_port(self) -> None:
        started = time.time()
        while not self.port_open:
            self.check_is_alive()
            try:
                probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                probe.connect(ChatbrokerController.irc_socket)
                probe.sendall(b"QUIT :chkport\r\n")
                probe.settimeout(1.0)
                try:
                    probe.recv(4096)
                except socket.timeout:
                    pass
                probe.close()
                self.port_open = True
            except (FileNotFoundError, ConnectionRefusedError):
                if time.time() - started > 60:
                    raise
                time.sleep(0.05)

    def terminate(self) -> None:
        ChatbrokerController.irc_socket = None
        super().terminate()

    def kill(self) -> None:
        ChatbrokerController.irc_socket = None
        super().kill()


def get_irctest_controller_class() -> Type[ChatbrokerController]:
    return ChatbrokerController
