"""The lean HTTP/1.1 client of ``openai_compatible`` (``providers/_http1.py``) against a scripted
loopback server: framing (length, chunked, to the end), keep-alive and stale connections,
encodings, errors; and the adapter reading limits and errors off its answers."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field

import pytest

from jurybox.config import JudgeConfig
from jurybox.errors import RateLimitError, TransientError
from jurybox.providers import create_provider
from jurybox.providers._http1 import Http1Endpoint, HttpConnectionError, _Reader
from jurybox.providers.openai_compatible import OpenAICompatibleProvider
from jurybox.records import CompletionRequest

REPLY = json.dumps(
    {"model": "m", "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
).encode()


def _answer(body: bytes = REPLY, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class Scripted:
    """Answers the n-th request with ``answers[n]``: bytes to send, and whether to close the
    connection after them."""

    answers: list[tuple[bytes, bool]]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    url: str = ""
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    piece: int = 0  # > 0: each answer goes out in pieces of this many bytes, one at a time
    ended: list[bool] = field(default_factory=list)  # per connection: the client closed it

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                self.requests.append(head + await reader.readexactly(length))
                data, close = self.answers[len(self.requests) - 1]
                await self._send(writer, data)
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended.append(True)
        writer.close()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        step = self.piece or len(data) or 1
        for start in range(0, len(data), step):
            writer.write(data[start : start + step])
            await writer.drain()
            if self.piece:
                await asyncio.sleep(0.002)  # so the client reads each piece on its own


def _serve(
    answers: list[tuple[bytes, bool]],
    test: Callable[[Scripted], Awaitable[None]],
    *,
    piece: int = 0,
) -> Scripted:
    async def main() -> Scripted:
        scripted = Scripted(answers, piece=piece)
        server = await asyncio.start_server(scripted.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        scripted.url = f"http://127.0.0.1:{port}/v1/chat/completions?x=1"
        async with server:
            await test(scripted)
            for writer in scripted.writers:  # the handlers end on the end of their connection
                writer.close()
            await asyncio.sleep(0.01)
        return scripted

    return asyncio.run(main())


def _endpoint(scripted: Scripted) -> Http1Endpoint:
    return Http1Endpoint(scripted.url, {"Content-Type": "application/json"})


def test_a_request_is_sent_as_http_1_1_and_the_connection_kept() -> None:
    async def two_posts(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        first = await endpoint.post(b'{"a": 1}')
        second = await endpoint.post(b'{"b": 22}')
        endpoint.close()
        assert first == (200, {"content-length": str(len(REPLY)), "x-ratelimit-a": "5"}, REPLY)
        assert second[2] == REPLY
        assert scripted.connections == 1

    answer = _answer(REPLY, "X-RateLimit-A: 5")
    scripted = _serve([(answer, False), (answer, False)], two_posts)
    head, _, body = scripted.requests[1].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions?x=1 HTTP/1.1"
    assert f"Host: {scripted.url.split('/')[2]}" in lines
    assert "Content-Type: application/json" in lines and "Content-Length: 9" in lines
    assert body == b'{"b": 22}'


def test_chunked_bodies_with_extensions_and_trailers() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
    )

    async def post_twice(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        assert (await endpoint.post(b"{}"))[2] == b"hello world"
        assert (await endpoint.post(b"{}"))[2] == b"hello world"  # framed: kept
        endpoint.close()
        assert scripted.connections == 1

    _serve([(chunked, False), (chunked, False)], post_twice)


def test_connection_close_and_unframed_bodies_open_a_new_connection() -> None:
    unframed = b"HTTP/1.1 200 OK\r\n\r\nto the end"

    async def post_three(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        assert (await endpoint.post(b"{}"))[2] == REPLY
        assert (await endpoint.post(b"{}"))[2] == b"to the end"
        assert (await endpoint.post(b"{}"))[2] == REPLY
        endpoint.close()
        assert scripted.connections == 3

    _serve(
        [(_answer(REPLY, "Connection: close"), True), (unframed, True), (_answer(), False)],
        post_three,
    )


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async def post_after_close(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        await endpoint.post(b"{}")
        await asyncio.sleep(0.05)  # the server has closed it (an idle timeout)
        assert (await endpoint.post(b"{}"))[2] == REPLY
        endpoint.close()
        assert scripted.connections == 2

    # The first answer says nothing of closing, then the server closes: a stale kept connection.
    _serve([(_answer(), True), (_answer(), False)], post_after_close)


def test_gzip_bodies_and_interim_answers() -> None:
    packed = gzip.compress(REPLY)
    answer = b"HTTP/1.1 100 Continue\r\n\r\n" + _answer(packed, "Content-Encoding: gzip")

    async def post(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        assert (await endpoint.post(b"{}"))[2] == REPLY
        endpoint.close()

    _serve([(answer, False)], post)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ncut short",
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        _answer(b"not gzip", "Content-Encoding: gzip"),
    ],
)
def test_a_broken_answer_is_a_connection_error(answer: bytes) -> None:
    async def post(scripted: Scripted) -> None:
        with pytest.raises(HttpConnectionError):
            await _endpoint(scripted).post(b"{}")

    _serve([(answer, True)], post)


def test_a_refused_connection_is_a_connection_error() -> None:
    async def refused() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        with pytest.raises(HttpConnectionError, match="ConnectionRefusedError"):
            await Http1Endpoint(f"http://127.0.0.1:{port}/v1", {}).post(b"{}")

    asyncio.run(refused())


def _provider(url: str) -> OpenAICompatibleProvider:
    base = url.rsplit("/chat/completions", 1)[0]
    judge = JudgeConfig(provider="openai_compatible", model="m", base_url=base, timeout_s=5)
    provider = create_provider("j", judge)
    assert isinstance(provider, OpenAICompatibleProvider)
    return provider


def _request() -> CompletionRequest:
    return CompletionRequest(system="rules", user="question", max_tokens=16)


def test_the_adapter_reads_limits_and_errors_off_the_lean_client() -> None:
    limited = _answer(REPLY, "x-ratelimit-limit-requests: 600", "X-RateLimit-Remaining-Requests: 9")
    refused = _answer(b'{"error": {"message": "slow down"}}', "Retry-After: 3", status="429 No")

    async def calls(scripted: Scripted) -> None:
        provider = _provider(scripted.url.split("?")[0])
        completion = await provider.complete(_request())
        assert completion.rate_limits is not None
        assert completion.rate_limits.requests_limit == 600
        assert completion.rate_limits.requests_remaining == 9
        with pytest.raises(RateLimitError, match="slow down") as raised:
            await provider.complete(_request())
        assert raised.value.retry_after == 3.0
        with pytest.raises(HttpConnectionError) as broken:
            await provider.complete(_request())
        error = provider.classify_error(broken.value)
        assert isinstance(error, TransientError) and "connection failed" in str(error)
        await provider.aclose()

    _serve([(limited, False), (refused, False), (b"garbage\r\n\r\n", True)], calls)


@pytest.mark.parametrize("piece", [1, 7])
def test_answers_that_arrive_in_pieces_are_put_together(piece: int) -> None:
    """The answer is read from the bytes as they come: a head, a chunk-size line or a body split
    anywhere gives the same answer, and the connection is still kept."""
    chunked = (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
    )
    packed = _answer(gzip.compress(REPLY), "Content-Encoding: gzip", "X-A: 1")

    async def posts(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        assert (await endpoint.post(b"{}"))[2] == REPLY
        assert (await endpoint.post(b"{}"))[2] == b"hello world"
        status, headers, body = await endpoint.post(b"{}")
        assert (status, headers["x-a"], body) == (200, "1", REPLY)
        assert (await endpoint.post(b"{}"))[2] == b"to the end"
        endpoint.close()
        assert scripted.connections == 1

    unframed = b"HTTP/1.1 200 OK\r\n\r\nto the end"
    _serve(
        [(_answer(), False), (chunked, False), (packed, False), (unframed, True)],
        posts,
        piece=piece,
    )


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"x" * 70_000 + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}",
    ],
)
def test_more_broken_answers_are_connection_errors(answer: bytes) -> None:
    async def post(scripted: Scripted) -> None:
        with pytest.raises(HttpConnectionError):
            await _endpoint(scripted).post(b"{}")

    _serve([(answer, True)], post, piece=4096)


def test_a_kept_connection_that_answered_partly_then_closed_is_not_sent_again() -> None:
    """Only a kept connection that gave back not a single byte is retried on another one."""

    async def posts(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        await endpoint.post(b"{}")
        with pytest.raises(HttpConnectionError, match="IncompleteReadError"):
            await endpoint.post(b"{}")
        endpoint.close()
        assert scripted.connections == 1

    _serve([(_answer(), False), (b"HTTP/1.1 200 OK\r\n", True)], posts)


def test_a_cancelled_call_closes_its_connection() -> None:
    """A call cancelled while it waits (the caller's timeout) closes its connection, which is
    not kept: the next call opens a new one."""

    async def posts(scripted: Scripted) -> None:
        endpoint = _endpoint(scripted)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(endpoint.post(b"{}"), 0.05)
        for _ in range(100):  # the server sees the connection end
            if scripted.ended:
                break
            await asyncio.sleep(0.01)
        assert scripted.ended == [True]
        assert (await endpoint.post(b"{}"))[2] == REPLY
        endpoint.close()
        assert scripted.connections == 2

    silent = b""  # the first request is never answered
    _serve([(silent, False), (_answer(), False)], posts)


class _CountingBuffer(bytearray):
    """A connection's buffer that counts the bytes its searches look at."""

    scanned = 0

    def find(self, sub: bytes, start: int = 0) -> int:  # type: ignore[override]
        found = super().find(sub, start)
        self.scanned += (len(self) if found < 0 else found + len(sub)) - start
        return found


def _tiny_chunks(count: int) -> tuple[bytes, bytes]:
    """A chunked answer whose body is ``count`` chunks of one byte (CR and LF among them), and
    that body."""
    body = bytes((i * 37) % 256 for i in range(count))
    chunks = b"".join(b"1\r\n" + body[i : i + 1] + b"\r\n" for i in range(count))
    head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + chunks + b"0\r\nTrailer: x\r\n\r\n", body


def _read_in_pieces(data: bytes, sizes: Iterator[int]) -> tuple[list[bytes], int]:
    """Feed ``data`` to a reader in pieces of ``sizes`` bytes, reading after each as a
    connection does: the bodies of the answers read and how many bytes the searches scanned."""
    reader = _Reader()
    buffer = _CountingBuffer()
    bodies, position = [], 0
    while position < len(data):
        size = next(sizes)
        buffer += data[position : position + size]
        position += size
        while (answer := reader.read(buffer, eof=False)) is not None:
            (status, _, body, keep), taken = answer
            assert (status, keep) == (200, True)
            bodies.append(body)
            del buffer[:taken]
    assert not buffer
    return bodies, buffer.scanned


@pytest.mark.parametrize("pieces", ["one byte", "random"])
def test_thousands_of_tiny_chunks_are_read_in_linear_time(pieces: str) -> None:
    """A body of 3,000 one-byte chunks arriving one byte at a time (or in random pieces) is
    decoded where the last piece left it, never from its start again: the searches look at a
    few bytes per byte received (scanning from the start would look at millions), and the next
    answer on the connection is read as well."""
    answer, body = _tiny_chunks(3000)
    data = answer + _answer() + answer
    rng = random.Random(19)
    sizes = itertools.repeat(1) if pieces == "one byte" else iter(lambda: rng.randint(1, 40), 0)
    bodies, scanned = _read_in_pieces(data, sizes)
    assert bodies == [body, REPLY, body]
    assert scanned <= 8 * len(data)


def test_tiny_chunks_in_random_pieces_over_the_wire() -> None:
    """The same body from a loopback server that sends it in random pieces of 1 to 64 bytes."""
    answer, body = _tiny_chunks(3000)
    rng = random.Random(7)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(2):
            head = await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
            start = 0
            while start < len(answer):
                step = rng.randint(1, 64)
                writer.write(answer[start : start + step])
                await writer.drain()
                await asyncio.sleep(0)  # let the client read some pieces on their own
                start += step
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            endpoint = Http1Endpoint(f"http://127.0.0.1:{port}/", {})
            assert (await endpoint.post(b"{}"))[2] == body
            assert (await endpoint.post(b"{}"))[2] == body  # framed: kept, read afresh
            endpoint.close()

    asyncio.run(main())


def test_an_answer_after_one_whose_head_came_in_pieces_is_read_from_its_start() -> None:
    """Where a search for the end of a head stopped is forgotten with its answer: a long head
    in two pieces, then a short one in the same piece as the end of the first answer."""
    first = _answer(REPLY, "X-Long: " + "x" * 300)
    head = first.index(b"\r\n\r\n") + 4
    data = first + _answer() + _answer(b"")
    bodies, _ = _read_in_pieces(data, iter([head - 2, len(data)]))
    assert bodies == [REPLY, REPLY, b""]
