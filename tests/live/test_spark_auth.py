"""No other local user can talk to the embedded Spark's ports: the runtime turns on Spark's own
authentication, with a secret Spark draws inside the JVM, so a client that does not hold it is
refused by the block-transfer port (here: a raw socket speaking Spark's transport protocol,
as any local program could), and the secret is in no conf and on no command line."""
from __future__ import annotations

import socket
import struct
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack(">i", len(data)) + data


def open_blocks(port: int, app_id: str, host: str = "127.0.0.1") -> tuple[str, bytes]:
    """Send one ``OpenBlocks`` RPC (no block ids) to a block manager, as a client without any
    secret would; ("response" | "failure" | "closed", the first bytes of the answer).

    The frame is Spark's ``MessageEncoder`` layout: frame length (8 bytes, itself included),
    message type (3 = RpcRequest: request id, body length), then the body, a
    ``BlockTransferMessage`` (type 0 = OpenBlocks: app id, executor id, block ids)."""
    body = b"\x00" + _text(app_id) + _text("driver") + struct.pack(">i", 0)
    header = b"\x03" + struct.pack(">qi", 42, len(body))
    frame = struct.pack(">q", 8 + len(header) + len(body)) + header + body
    data = b""
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(frame)
        try:
            while len(data) < 8 or len(data) < struct.unpack(">q", data[:8])[0]:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    if len(data) < 9:
        return "closed", data
    return {4: "response", 5: "failure"}.get(data[8], f"type {data[8]}"), data[9:400]


def _block_manager_ports(spark) -> list[int]:
    keys = str(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().keys().mkString(","))
    return [int(k.rsplit(":", 1)[1]) for k in keys.split(",") if k]


def test_the_block_port_refuses_a_client_without_the_secret(spark_runtime):
    spark = spark_runtime.spark
    assert spark_runtime.owned and spark_runtime.master.startswith("local")
    sc = spark.sparkContext
    ports = _block_manager_ports(spark)
    assert ports
    for port in ports:
        kind, detail = open_blocks(port, sc.applicationId)
        assert kind in ("failure", "closed"), (kind, detail)  # without authentication: "response"
        assert kind == "closed" or b"Sasl" in detail or b"auth" in detail.lower(), detail
    # and Spark still works with it on: a shuffle and a Python function
    assert spark.sql("SELECT id % 3 AS k, count(*) AS n FROM range(90) GROUP BY 1").count() == 3
    assert spark.sparkContext.parallelize([1, 2, 3], 2).map(lambda x: x * 2).sum() == 12


def test_the_secret_is_drawn_by_spark_not_passed_in(spark_runtime):
    from pyspark import SparkContext

    conf = dict(spark_runtime.spark.sparkContext.getConf().getAll())
    assert conf.get("spark.authenticate") == "true"
    assert "spark.authenticate.secret" not in conf
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is not None:  # the JVM's command line, readable by every local user
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert b"spark.authenticate.secret" not in cmdline


def test_a_wrong_token_on_the_accumulator_port_is_one_line_not_a_traceback(spark_runtime, capfd):
    """PySpark refuses it; the server console says so in one line (it printed a traceback). The
    context's own server serves one connection at a time and the JVM holds it once a Python
    function ran, so this is PySpark's server started anew, as a context starts it."""
    import time
    from pyspark import accumulators

    token = "t" * 64
    server = accumulators._start_update_server(token, False)
    try:
        host, port = server.server_address[:2]
        with socket.create_connection((host, port), timeout=10) as s:
            s.sendall(b"x" * len(token))
            try:
                s.recv(16)
            except OSError:
                pass
        deadline = time.time() + 10
        err = ""
        while "accumulator port refused" not in err and time.time() < deadline:
            time.sleep(0.1)
            err += capfd.readouterr().err
    finally:
        server.shutdown()
        server.server_close()
    assert "accumulator port refused a connection" in err and "Traceback" not in err, err
    assert len([ln for ln in err.splitlines() if "accumulator" in ln]) == 1
