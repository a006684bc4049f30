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

Each connection is an ``asyncio.Protocol`` that reads the answer from the bytes as the event loop
hands them over and completes one future per request (asyncio streams cost ~9,000 more
instructions per call: BENCHMARKS.md, "fifth pass"). ``https://`` and proxied endpoints stay on
aiohttp. Header names in answers are lower-cased.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import zlib
from collections.abc import Mapping

# A response head (or a chunk-size line) longer than this is refused, as asyncio streams refuse
# a line past their default limit.
_LINE_LIMIT = 2**16
_Answer = tuple[int, dict[str, str], bytes, bool]  # status, headers, body, may be kept


class HttpConnectionError(Exception):
    """The server could not be reached, or its answer was not valid HTTP/1.1."""


class _Stale(Exception):
    """A kept-alive connection was closed by the server before it answered: send again."""


class _Connection(asyncio.Protocol):
    """One connection: sends a request and reads its answer straight from the bytes the event
    loop hands over (``data_received``), completing one future per request; no stream objects,
    no task wake-up per piece of the answer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._reader = _Reader()  # how far the answer in the buffer has been read
        self._waiter: asyncio.Future[_Answer] | None = None
        self._reused = False
        self._eof = False  # the server closed its side (or the connection is gone)
        self._lost: BaseException | None = None  # why the connection went, if it broke

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # a TCP connection
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._waiter is not None:
            self._answer()

    def eof_received(self) -> bool:
        self._eof = True
        if self._waiter is not None:
            self._answer()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        if exc is not None:
            self._lost = exc
        if self._waiter is not None:
            self._answer()

    @property
    def usable(self) -> bool:
        """Open, and the server has not closed its side."""
        transport = self._transport
        return transport is not None and not transport.is_closing() and not self._eof

    def send(self, request: bytes, *, reused: bool) -> asyncio.Future[_Answer]:
        """Send ``request``; the future gives its answer (or raises what went wrong)."""
        assert self._transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        self._reused = reused
        self._transport.write(request)
        if self._buffer or self._eof:  # bytes (or the end) already there: read them
            self._answer()
        return waiter

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def _answer(self) -> None:
        """Complete the waiting request if the buffer now holds its whole answer (or the
        connection ended or broke first)."""
        waiter = self._waiter
        assert waiter is not None
        try:
            answer = self._reader.read(self._buffer, self._eof)
        except (ValueError, EOFError) as exc:
            self._reader = _Reader()  # the connection is closed: nothing more is read on it
            self._finish(waiter, exc)
            return
        if answer is not None:
            del self._buffer[: answer[1]]
            self._finish(waiter, answer[0])
        elif self._eof:  # the answer will never be complete
            self._finish(waiter, self._ended())

    def _finish(self, waiter: asyncio.Future[_Answer], outcome: _Answer | BaseException) -> None:
        self._waiter = None
        if waiter.done():  # cancelled: the caller closes the connection
            return
        if isinstance(outcome, BaseException):
            waiter.set_exception(outcome)
        else:
            waiter.set_result(outcome)

    def _ended(self) -> BaseException:
        """Why an answer cannot be read after the end of the connection."""
        if self._lost is not None:  # reset or another socket error
            return self._lost
        if self._reused and not self._buffer:
            return _Stale()
        return asyncio.IncompleteReadError(bytes(self._buffer), None)


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
                if not connection.usable:
                    connection.close()
                    continue
                try:
                    return await self._exchange(connection, request, reused=True)
                except _Stale:
                    continue
            loop = asyncio.get_running_loop()
            _, connection = await loop.create_connection(
                lambda: _Connection(loop), self._host, self._port
            )
            return await self._exchange(connection, request, reused=False)
        except (OSError, EOFError, ValueError) as exc:
            # OSError: refused, reset; EOFError: IncompleteReadError (cut short); ValueError:
            # an unreadable status line, header or chunk size.
            raise HttpConnectionError(f"{type(exc).__name__}: {exc}") from None

    async def _exchange(
        self, connection: _Connection, request: bytes, *, reused: bool
    ) -> tuple[int, dict[str, str], bytes]:
        keep = False
        try:
            status, headers, body, keep_alive = await connection.send(request, reused=reused)
            body = _decoded(body, headers.get("content-encoding"))
            keep = keep_alive
            return status, headers, body
        finally:
            if keep:
                self._idle.append(connection)
            else:
                connection.close()

    def close(self) -> None:
        """Close the idle connections (those in use close when their call ends)."""
        while self._idle:
            self._idle.pop().close()


class _Reader:
    """Reads one answer after the other from the start of a connection's buffer as its bytes
    arrive, going on where the last bytes left it: neither a head nor a chunked body is scanned
    again from its start when another piece comes (thousands of tiny chunks stay linear). The
    buffer only grows while an answer is read; once ``read`` gives one back, it starts afresh
    on the bytes that follow (the caller removes the answer's). An answer that came in one piece
    (the usual case) is read without storing anything."""

    __slots__ = ("_at", "_head", "_parts", "_pending", "_searched", "_start")

    def __init__(self) -> None:
        self._head: tuple[int, dict[str, str], bool] | None = None  # once read (not a 1xx)
        self._start = 0  # where the head being read begins (after any 1xx answers), then the body
        self._searched = 0  # where the search for the end of that head goes on
        # A chunked body: where decoding goes on (0: at the start of the body), what comes there
        # (-1: a chunk-size line; n > 0: n bytes of a chunk and its CRLF; 0: trailers up to a
        # blank line), and the chunks so far.
        self._at = 0
        self._pending = -1
        self._parts: list[bytes] = []

    def read(self, buffer: bytearray, eof: bool) -> tuple[_Answer, int] | None:
        """The answer at the start of ``buffer`` and how many bytes it takes, or None while it
        is incomplete; 1xx answers before it are skipped."""
        head, start = self._head, self._start
        if head is None:
            searched = self._searched
            while True:
                end = buffer.find(b"\r\n\r\n", searched)
                if end < 0 or end - start > _LINE_LIMIT:
                    if end >= 0 or len(buffer) - start > _LINE_LIMIT:
                        raise ValueError(f"a response head longer than {_LINE_LIMIT} bytes")
                    # The head's end may straddle this piece and the next.
                    self._start, self._searched = start, max(start, len(buffer) - 3)
                    return None
                head = _parse_head(buffer[start:end])
                start = searched = end + 4
                if not 100 <= head[0] < 200:  # 100 Continue and the like: the answer follows
                    break
        status, headers, keep_alive = head
        framed = self._body(buffer, start, status, headers, eof)
        if framed is None:
            self._head, self._start, self._searched = head, start, start
            return None
        if self._searched:  # something was stored (searched >= start): forget it
            self._head = None
            self._start = self._searched = 0
        body, taken, delimited = framed
        return (status, headers, body, keep_alive and delimited), taken

    def _body(
        self, buffer: bytearray, start: int, status: int, headers: Mapping[str, str], eof: bool
    ) -> tuple[bytes, int, bool] | None:
        """The body from ``start``, where it ends, and whether it was framed (else it ran to
        the end of the connection); None while it is incomplete."""
        if status in (204, 304):
            return b"", start, True
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return self._chunks(buffer, start)
        length = headers.get("content-length")
        if length is not None:
            size = int(length)
            if size < 0:
                raise ValueError(f"negative Content-Length {size}")
            end = start + size
            if len(buffer) < end:
                if eof:
                    raise asyncio.IncompleteReadError(bytes(buffer[start:]), size)
                return None
            return bytes(buffer[start:end]), end, True
        if not eof:
            return None
        return bytes(buffer[start:]), len(buffer), False

    def _chunks(self, buffer: bytearray, start: int) -> tuple[bytes, int, bool] | None:
        """The chunked body from ``start``, where it ends and True, once it is all in
        ``buffer``; each chunk is taken as soon as it is complete and never read again."""
        at, pending, parts = self._at or start, self._pending, self._parts
        while True:
            if pending < 0:  # a chunk-size line
                line = _line(buffer, at)
                if line is None:
                    break
                pending = int(bytes(buffer[at:line]).split(b";", 1)[0].strip(), 16)
                if pending < 0:
                    raise ValueError(f"a negative chunk size {pending}")
                at = line + 2
            elif pending:  # a chunk and its CRLF
                end = at + pending
                if len(buffer) < end + 2:
                    break
                parts.append(bytes(buffer[at:end]))
                if buffer[end : end + 2] != b"\r\n":
                    raise ValueError("a chunk does not end with CRLF")
                at, pending = end + 2, -1
            else:  # after the last chunk (size 0): trailers, up to the blank line
                line = _line(buffer, at)
                if line is None:
                    break
                blank = line == at
                at = line + 2
                if blank:
                    self._at, self._pending, self._parts = 0, -1, []
                    return b"".join(parts), at, True
        self._at, self._pending = at, pending
        return None


def _parse_head(head: bytearray) -> tuple[int, dict[str, str], bool]:
    """Status, headers and whether the connection may be kept, from a response's head (up to
    the blank line that ends it)."""
    lines = head.decode("latin-1").split("\r\n")
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


def _line(buffer: bytearray, start: int) -> int | None:
    """Where the line from ``start`` ends (its CRLF), or None while it is incomplete."""
    end = buffer.find(b"\r\n", start)
    if end < 0 or end - start > _LINE_LIMIT:
        if end >= 0 or len(buffer) - start > _LINE_LIMIT:
            raise ValueError(f"a line longer than {_LINE_LIMIT} bytes")
        return None
    return end


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
