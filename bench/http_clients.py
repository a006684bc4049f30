"""Bare HTTP clients for ``throughput.py --breakdown``: what one Chat Completions call costs in
CPU without jurybox, with each client library, one call at a time and paced.

Paced means one call started every ``interval_s`` while earlier ones are still in flight, as in
a rate-limited run: each call then wakes the event loop on its own instead of sharing a wake-up
with dozens of others, which costs several times the CPU of the same call in a burst, whatever
the client.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[int], Awaitable[Any]]


async def cpu_ms_sequential(call: Call, n: int) -> tuple[float, list[Any]]:
    """CPU ms per call, one call at a time (after one warm-up call)."""
    await call(0)
    start = time.process_time()
    out = [await call(i) for i in range(n)]
    return 1000.0 * (time.process_time() - start) / n, out


async def cpu_ms_paced(call: Call, n: int, interval_s: float) -> float:
    """CPU ms per call when a call starts every ``interval_s`` (calls overlap)."""
    await call(0)
    start = time.process_time()
    tasks = []
    for i in range(n):
        tasks.append(asyncio.create_task(call(i)))
        await asyncio.sleep(interval_s)
    await asyncio.gather(*tasks)
    return 1000.0 * (time.process_time() - start) / n


def raw_client(url: str, bodies: list[dict[str, Any]]) -> tuple[Call, Callable[[], None]]:
    """Hand-written HTTP/1.1 over asyncio streams with a keep-alive pool: a lower bound for
    any client (no chunked bodies, TLS, proxies or error handling). Returns (call, close)."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    opened: list[asyncio.StreamWriter] = []

    async def call(i: int) -> Any:
        if idle:
            reader, writer = idle.pop()
        else:
            reader, writer = await asyncio.open_connection(host, int(port))
            opened.append(writer)
        payload = json.dumps(bodies[i % len(bodies)]).encode()
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: wire\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        writer.write(head.encode() + payload)
        lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        length = next(
            int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length")
        )
        data = json.loads(await reader.readexactly(length))
        idle.append((reader, writer))
        return data

    def close() -> None:
        for writer in opened:
            writer.close()

    return call, close


def aiohttp_call(session: Any, url: str, bodies: list[dict[str, Any]]) -> Call:
    """A bare aiohttp POST + ``json.loads`` (what the openai_compatible adapter is built on)."""

    async def call(i: int) -> Any:
        payload = json.dumps(bodies[i % len(bodies)]).encode()
        headers = {"Content-Type": "application/json"}
        async with session.post(url + "/chat/completions", data=payload, headers=headers) as r:
            return json.loads(await r.read())

    return call


def httpx2_call(client: Any, bodies: list[dict[str, Any]]) -> Call:
    """A bare httpx2 POST + ``.json()`` (the HTTP stack under the vendor SDKs)."""

    async def call(i: int) -> Any:
        reply = await client.post("/chat/completions", json=bodies[i % len(bodies)])
        return reply.json()

    return call
