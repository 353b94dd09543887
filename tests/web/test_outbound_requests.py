"""Every request the server makes to an LLM endpoint goes through one function: `Endpoint.client()`
(app/services/llm/endpoints.py), which applies the endpoint rules (admin-configured addresses, a key
only to its own origin). An AST scan of app/ fails on any other way out: an openai client built
elsewhere, a make_client call elsewhere, an HTTP library, a socket that connects.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

# Modules whose import is a way to make requests.
NETWORK_MODULES = ("httpx", "requests", "urllib.request", "http.client", "urllib3", "aiohttp", "pycurl", "ftplib",
                   "smtplib", "telnetlib", "xmlrpc.client", "websocket", "websockets")
# socket functions that open connections (socket.gethostname and friends do not).
SOCKET_CONNECTORS = {"socket", "create_connection", "socketpair", "fromfd"}
OPENAI_CLIENTS = {"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"}

# The documented exceptions, each with why it is no way around the endpoint rules:
ALLOWED = {
    # The one constructor of an openai client; Endpoint.client() is its only caller (checked below).
    ("app/core/llm/client.py", "openai client"),
    # Endpoint.client(): the one way a feature gets a client (the function this guard protects).
    ("app/services/llm/endpoints.py", "make_client"),
    # `import-leval --download`: fetches L-Eval's public files from LEVAL_DOWNLOAD_BASE, an address set in the
    # server's environment by whoever runs it (never by a user of the app), with no key; not an LLM endpoint.
    ("app/services/download.py", "urllib.request"),
    # `serve --processes N`: the listening socket the children inherit; it accepts, it never connects.
    ("app/cli/processes.py", "socket.socket"),
}


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def outbound_uses(source: str) -> list[tuple[int, str, str]]:
    """(line, kind, code) of every way out in a module's source; kind is what ALLOWED names."""
    tree = ast.parse(source)
    socket_modules, connectors = {"socket"}, set()  # names bound to the socket module, to its connectors
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "socket":
                    socket_modules.add(alias.asname or alias.name)
                if alias.name in NETWORK_MODULES or alias.name.startswith(tuple(m + "." for m in NETWORK_MODULES)):
                    found.append((node.lineno, alias.name, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = {alias.name for alias in node.names}
            modules = {node.module} | {f"{node.module}.{name}" for name in names}
            for module in sorted(modules & set(NETWORK_MODULES)):
                found.append((node.lineno, module, f"from {node.module} import {', '.join(sorted(names))}"))
            if node.module == "socket":
                connectors |= {alias.asname or alias.name for alias in node.names if alias.name in SOCKET_CONNECTORS}
            if node.module == "openai" and names & OPENAI_CLIENTS:
                found.append((node.lineno, "openai client", f"from openai import {', '.join(sorted(names))}"))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if last in OPENAI_CLIENTS:
                found.append((node.lineno, "openai client", f"{name}("))
            elif last == "make_client":
                found.append((node.lineno, "make_client", f"{name}("))
            elif name in connectors or ("." in name and name.rsplit(".", 1)[0] in socket_modules
                                        and last in SOCKET_CONNECTORS):
                found.append((node.lineno, "socket." + last, f"{name}("))
    return found


def _app_files() -> list[Path]:
    return sorted((REPO_ROOT / "app").rglob("*.py"))


def test_no_request_leaves_the_server_except_through_the_endpoint_owner():
    stray = []
    for path in _app_files():
        relative = path.relative_to(REPO_ROOT).as_posix()
        for line, kind, code in outbound_uses(path.read_text(encoding="utf-8")):
            if (relative, kind) not in ALLOWED:
                stray.append(f"{relative}:{line}: {code}")
    assert not stray, "requests that bypass Endpoint.client() (app/services/llm/endpoints.py):\n" + "\n".join(stray)


def test_every_allowed_exception_is_still_there():
    """An exception nobody needs any more is taken off the list, not left open."""
    used = set()
    for path in _app_files():
        relative = path.relative_to(REPO_ROOT).as_posix()
        used |= {(relative, kind) for _, kind, _ in outbound_uses(path.read_text(encoding="utf-8"))}
    assert ALLOWED <= used, ALLOWED - used


def test_make_client_is_called_by_endpoint_client_only():
    tree = ast.parse((REPO_ROOT / "app/services/llm/endpoints.py").read_text(encoding="utf-8"))
    callers = [function.name for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
               for node in ast.walk(function)
               if isinstance(node, ast.Call) and _dotted(node.func).endswith("make_client")]
    endpoint = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Endpoint")
    assert callers == ["client"] and any(isinstance(n, ast.FunctionDef) and n.name == "client" for n in endpoint.body)


def test_the_scan_finds_each_way_out():
    samples = {
        "import httpx\nhttpx.get('http://10.0.0.1')": "httpx",
        "import requests": "requests",
        "from urllib import request": "urllib.request",
        "import urllib.request": "urllib.request",
        "from http.client import HTTPConnection": "http.client",
        "import http.client as h": "http.client",
        "import openai\nopenai.OpenAI(base_url=u)": "openai client",
        "from openai import OpenAI": "openai client",
        "from app.core.llm.client import make_client\nmake_client(u, k)": "make_client",
        "import socket\nsocket.create_connection(('127.0.0.1', 22))": "socket.create_connection",
        "import socket\ns = socket.socket()": "socket.socket",
        "from socket import create_connection as c\nc(('h', 1))": "socket.c",
        "from socket import socket\nsocket()": "socket.socket",
        "import socket as s\ns.create_connection(('h', 1))": "socket.create_connection",
    }
    for source, kind in samples.items():
        assert kind in {k for _, k, _ in outbound_uses(source)}, source
    harmless = "import socket\nsocket.gethostname()\nfrom urllib.parse import urlsplit\nclient.chat.completions.create()"
    assert outbound_uses(harmless) == []
