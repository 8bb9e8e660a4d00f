"""Measures what hostile GraphQL requests cost a running timebot (not a test; see issue 14).

Starts `timebot serve` (SQLite, a temporary data dir) in a child process and prints:
- the time and the server's RSS growth for an unauthenticated 20,000-alias document;
- the time for the same document with a valid key, and how long a /healthz request made
  meanwhile took (how long the event loop was held);
- the status of the inputs that used to answer 500.

Run: PYTHONPATH=$PWD .venv/bin/python scripts/hostile_probe.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def documents() -> int:
    """The shape of every GraphQL document in timebot/, bot/ and mail/ and of the IDE's
    introspection query, as the limits count them (--documents)."""
    import ast

    from graphql import OperationDefinitionNode, get_introspection_query, parse

    from service.graphql.limits import check_document
    from service.graphql.schema import build_schema

    schema = build_schema()
    found: dict[str, str] = {
        "IDE introspection": get_introspection_query(
            descriptions=True, specified_by_url=True, directive_is_repeatable=True,
            schema_description=True, input_value_deprecation=True,
        )
    }
    for package in ("timebot", "bot", "mail"):
        for path in sorted(Path(package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value.strip()
                    if not text.startswith(("query", "mutation", "{")):
                        continue
                    try:
                        document = parse(text)
                    except Exception:
                        continue
                    if any(isinstance(d, OperationDefinitionNode) for d in document.definitions):
                        found[f"{path}:{node.lineno}"] = text
    worst: dict[str, int] = {}
    for name, text in found.items():
        shape, error = check_document(schema, parse(text))
        figures = {"depth": shape.depth, "fields": shape.fields, "aliases": shape.aliases,
                   "mutations": shape.mutations, "cost": shape.cost, "chars": len(text)}
        for key, value in figures.items():
            worst[key] = max(worst.get(key, 0), value)
        print(f"{name}: {figures}{' ' + error.message if error else ''}")
    print(f"{len(found)} documents; largest: {worst}")
    return 0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    if "--documents" in sys.argv:
        return documents()
    data_dir = Path(tempfile.mkdtemp(prefix="hostile-probe-"))
    port = _free_port()
    env = dict(os.environ)
    env.update({
        "TIMEBOT_DATA_DIR": str(data_dir),
        "TIMEBOT_SMTP_PORT": "0",
        "TIMEBOT_HTTP_HOST": "127.0.0.1",
        "TIMEBOT_HTTP_PORT": str(port),
        "TIMEBOT_SECRET_KEY": "probe-secret-key-0123456789abcdef-probe",
    })
    cli = [sys.executable, "-m", "shell.cli"]
    init = subprocess.run(
        [*cli, "service", "init", "--org", "Probe", "--admin-name", "Ada",
         "--admin-email", "ada@example.com"],
        env=env, check=True, capture_output=True, text=True,
    )
    apikey = json.loads(init.stdout)["admin"]["apikey"]
    server = subprocess.Popen([*cli, "serve"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=120) as client:
            for _ in range(300):
                try:
                    if client.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            else:
                raise RuntimeError("server did not start")
            aliases = " ".join(f"a{i}: __typename" for i in range(20_000))
            document = "{ " + aliases + " }"
            # warm up
            client.post(f"{base}/graphql", json={"query": "{ __typename }"})
            rss0 = _rss_kb(server.pid)
            times = []
            for attempt in range(3):
                doc = document + f" # {attempt}"
                start = time.perf_counter()
                response = client.post(f"{base}/graphql", json={"query": doc},
                                       headers={"apikey": "wrong-key"})
                times.append(time.perf_counter() - start)
            rss1 = _rss_kb(server.pid)
            cpu0 = _cpu_s(server.pid)
            for attempt in range(20):
                client.post(f"{base}/graphql", json={"query": document + f" # {attempt} x"},
                            headers={"apikey": "wrong-key"})
            cpu = (_cpu_s(server.pid) - cpu0) / 20
            print(f"server CPU per unauthenticated 20000-alias request: {cpu * 1000:.1f} ms")
            print(f"unauthenticated 20000 aliases: {min(times) * 1000:.1f} ms "
                  f"(answer {response.status_code} {response.text[:80]})")
            print(f"RSS growth after 3 such documents: {(rss1 - rss0) / 1024:.1f} MB")

            health: list[float] = []

            def probe_health() -> None:
                time.sleep(0.05)
                with httpx.Client(timeout=120) as other:
                    start = time.perf_counter()
                    other.get(f"{base}/healthz")
                    health.append(time.perf_counter() - start)

            fields = " ".join(f"a{i}: currentPerson {{ id name }}" for i in range(20_000))
            thread = threading.Thread(target=probe_health)
            thread.start()
            start = time.perf_counter()
            response = client.post(f"{base}/graphql", json={"query": "{ " + fields + " }"},
                                   headers={"apikey": apikey})
            keyed = time.perf_counter() - start
            thread.join()
            print(f"keyed 20000 aliases: {keyed * 1000:.1f} ms (answer {response.status_code} "
                  f"{response.text[:100]}); /healthz meanwhile {health[0] * 1000:.1f} ms")

            cases = {
                "variables nested 100000 deep": (
                    '{"query":"query($f:[SvcTimeRecordFilter]){ getTimeRecords(filter:$f)'
                    '{ id } }","variables":{"f":' + "[" * 100_000 + "]" * 100_000 + "}}"
                ),
                "1000 mutations": json.dumps({"query": "mutation { " + " ".join(
                    f"m{i}: editOrganisationName(name: \"x{i}\") {{ id }}" for i in range(1000)
                ) + " }"}),
                "startTime 1e20": json.dumps({
                    "query": "query($t:SvcTimestamp){ getTimeRecords(filter:[{startTime:$t}])"
                             "{ id } }", "variables": {"t": 1e20}}),
                "lone surrogate": '{"query":"mutation($n:SvcName!){ editOrganisationName('
                                  'name:$n){ id } }","variables":{"n":"a\\ud800b"}}',
            }
            for name, body in cases.items():
                try:
                    response = client.post(f"{base}/graphql", content=body.encode(),
                                           headers={"apikey": apikey,
                                                    "content-type": "application/json"})
                    print(f"{name}: {response.status_code} {response.text[:160]}")
                except httpx.TransportError as error:
                    print(f"{name}: no answer ({error!r}); server exit code {server.poll()}")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
