"""A scripted fake Kafka broker on loopback, for kgc's own error paths only.

It answers ApiVersions and Metadata from kafka-python's message classes (non-flexible versions,
so a response is the correlation id and the body) and, per API key, whatever the test's script
says: an answer, a closed connection, bytes that do not decode, or nothing. It never claims that
kgc conforms to anything; it makes a broker misbehave on purpose.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from kafka.protocol.metadata import ApiVersionsResponse, MetadataResponse
from kgc.conformance.mutants.proxy import recv_exact

CLOSE = "close"  # close the connection instead of answering
GARBAGE = b"\x00\x07garbage"  # a body no response class decodes

API_VERSIONS, METADATA = 18, 3
# What a plain classic-group broker offers, non-flexible versions only
DEFAULT_APIS: dict[int, tuple[int, int]] = {
    API_VERSIONS: (0, 2),
    METADATA: (0, 8),
    8: (0, 7),  # OffsetCommit
    9: (0, 5),  # OffsetFetch
    10: (0, 2),  # FindCoordinator
    11: (0, 5),  # JoinGroup
    12: (0, 3),  # Heartbeat
    13: (0, 3),  # LeaveGroup
    14: (0, 3),  # SyncGroup
    15: (0, 4),  # DescribeGroups
    19: (0, 4),  # CreateTopics
    32: (0, 1),  # DescribeConfigs
}

Script = Callable[[int, int], Any]  # (api_key, api_version) -> bytes body, CLOSE, or None


class FakeBroker:
    def __init__(self, script: Script, apis: dict[int, tuple[int, int]] | None = None) -> None:
        self.apis = dict(DEFAULT_APIS if apis is None else apis)
        self.script = script
        self.seen: list[tuple[int, int]] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> FakeBroker:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = recv_exact(conn, 4)
                if head is None:
                    return
                frame = recv_exact(conn, struct.unpack(">i", head)[0])
                if frame is None:
                    return
                api_key, version, correlation_id = struct.unpack_from(">hhi", frame, 0)
                self.seen.append((api_key, version))
                body = self._answer(api_key, version)
                if body is None:
                    continue  # never answer
                if body == CLOSE:
                    return
                payload = struct.pack(">i", correlation_id) + bytes(body)
                conn.sendall(struct.pack(">i", len(payload)) + payload)

    def _answer(self, api_key: int, version: int) -> Any:
        scripted = self.script(api_key, version)
        if scripted is not None:
            return scripted
        if api_key == API_VERSIONS:
            return api_versions_body(self.apis, version)
        if api_key == METADATA:
            return metadata_body(self.port, version)
        return CLOSE


def api_versions_body(apis: dict[int, tuple[int, int]], version: int) -> bytes:
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
        for k, (lo, hi) in sorted(apis.items())
    ]
    top = apis[API_VERSIONS][1]
    if version > top:  # as Kafka answers a version it does not speak: error 35, v0 layout
        return bytes(ApiVersionsResponse(error_code=35, api_keys=keys).encode(version=0))
    response = ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
    return bytes(response.encode(version=version))


def metadata_body(port: int, version: int) -> bytes:
    broker = MetadataResponse.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port)
    response = MetadataResponse(
        throttle_time_ms=0, brokers=[broker], cluster_id="fake", controller_id=1, topics=[]
    )
    return bytes(response.encode(version=version))
