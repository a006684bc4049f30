"""A lean HTTP/1.1 client for ``openai_compatible`` judges at plain ``http://`` addresses.

A self-hosted judge (vLLM, llama.cpp server, a gateway on the same network) answers hundreds of
calls a second, and the client's CPU per call bounds a run (BENCHMARKS.md, "Issue 19: CPU per
judgment"). aiohttp spends most of its ~0.3 ms per call on machinery such a call does not use
(cookies, redirects, auth, middlewares, tracing); this client does only what the call needs:

* one ``POST`` with a ``Content-Length`` body, over keep-alive connections reused in LIFO order
  (as many as there are calls in flight: the pipeline bounds those);
* responses framed by ``Content-Length``, ``Transfer-Encoding: chunked`` or the end of the
  connection, ``gzip``/``deflate`` bodies decoded (none is asked for), 1xx answers skipped;
* a kept connection the server has since closed (idle timeout) is dropped and the request sent
  on another one, only when not a single byte of an answer came back on it;
* anything else that goes wrong on the wire raises ``HttpConnectionError`` (a transient error to
  the adapter) and the connection is closed, as it is when the call is cancelled (timeout).

``https://`` and proxied endpoints stay on aiohttp. Header names in answers are lower-cased.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import zlib
from collections.abc import Mapping

_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class HttpConnectionError(Exception):
    """The server could not be reached, or its answer was not valid HTTP/1.1."""


class _Stale(Exception):
    """A kept-alive connection was closed by the server before it answered: send again."""


class Http1Endpoint:
    """``POST``s to one URL over a pool of keep-alive connections of the running event loop."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or 80
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {parts.netloc}", "User-Agent: jurybox"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        # Everything but the body's length, encoded once.
        self._head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")
        self._idle: list[_Connection] = []

    async def post(self, payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, body) of one ``POST`` of ``payload``."""
        request = b"%s%d\r\n\r\n%s" % (self._head, len(payload), payload)
        try:
            while self._idle:
                connection = self._idle.pop()
                if connection[1].is_closing() or connection[0].at_eof():
                    connection[1].close()
                    continue
                try:
                    return await self._exchange(connection, request, reused=True)
                except _Stale:
                    continue
            connection = await asyncio.open_connection(self._host, self._port)
            return await self._exchange(connection, request, reused=False)
        except (OSError, EOFError, ValueError, asyncio.LimitOverrunError) as exc:
            # OSError: refused, reset; EOFError: IncompleteReadError (cut short); ValueError:
            # an unreadable status line, header or chunk size.
            raise HttpConnectionError(f"{type(exc).__name__}: {exc}") from None

    async def _exchange(
        self, connection: _Connection, request: bytes, *, reused: bool
    ) -> tuple[int, dict[str, str], bytes]:
        reader, writer = connection
        keep = False
        try:
            writer.write(request)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if reused and not exc.partial:
                    raise _Stale from None
                raise
            status, headers, keep_alive = _parse_head(head)
            while 100 <= status < 200:  # 100 Continue and the like: the answer follows
                status, headers, keep_alive = _parse_head(await reader.readuntil(b"\r\n\r\n"))
            body, framed = await _read_body(reader, status, headers)
            body = _decoded(body, headers.get("content-encoding"))
            keep = keep_alive and framed
            return status, headers, body
        finally:
            if keep:
                self._idle.append(connection)
            else:
                writer.close()

    def close(self) -> None:
        """Close the idle connections (those in use close when their call ends)."""
        while self._idle:
            self._idle.pop()[1].close()


def _parse_head(head: bytes) -> tuple[int, dict[str, str], bool]:
    """Status, headers and whether the connection may be kept, from a response's head."""
    lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    status = int(rest[:3])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"not a header line: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
    return status, headers, keep_alive


async def _read_body(
    reader: asyncio.StreamReader, status: int, headers: Mapping[str, str]
) -> tuple[bytes, bool]:
    """The body and whether it was framed (else it ran to the end of the connection)."""
    if status in (204, 304):
        return b"", True
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader), True
    length = headers.get("content-length")
    if length is not None:
        size = int(length)
        if size < 0:
            raise ValueError(f"negative Content-Length {size}")
        return await reader.readexactly(size), True
    return await reader.read(), False


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            break
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("a chunk does not end with CRLF")
    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, up to the blank line
        pass
    return b"".join(parts)


def _decoded(body: bytes, encoding: str | None) -> bytes:
    if not encoding or encoding == "identity":
        return body
    try:
        if encoding == "gzip":
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            return zlib.decompress(body)
    except zlib.error as exc:
        raise ValueError(f"a {encoding} body that does not decode: {exc}") from None
    raise ValueError(f"a body in an encoding that was not asked for: {encoding}")
