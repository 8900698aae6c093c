"""``mcp --allow-runs``: the one tool that runs Spark, ``verify_fix``, over a real stdio session.
Without the flag the tool does not exist (tests/mcp/test_mcp_server.py); with it, a captured query
reruns with a fix and is scored, and SQL the guard refuses never runs, even with ``trusted`` on.
One server process (one JVM) for the module."""
from __future__ import annotations

import gzip
import json

import jsonschema
import pytest

from aqe_core.mcp.schemas import answer_schema
from aqe_core.server_settings import SAMPLES_DIR
from tests.conftest import TEST_SECRET
from tests.mcp.test_mcp_server import ROOT, Session

CAPTURE = str(SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")
LOG = str(SAMPLES_DIR / "eventlogs" / "local-1795309160158.zstd")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("lens_home")


@pytest.fixture(scope="module")
def runs(home):
    pytest.importorskip("pyspark")
    env = {"AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"), "PYTHONPATH": str(ROOT),
           "AQE_LENS_TRUSTED": "1", "AQE_LENS_RUN_TIME_LIMIT": "600",  # trusted: the MCP runs stay guarded
           "AQE_LENS_TEST_SECRET": TEST_SECRET}  # a secret in the server's environment: never read by SQL
    s = Session(env, args=["--allow-runs"])
    yield s
    s.close()


def test_verify_fix_is_served_and_refuses_what_it_cannot_run(runs):
    tools = {t.name: t for t in runs.run(runs.client.list_tools()).tools}
    assert "verify_fix" in tools and tools["verify_fix"].output_schema == answer_schema("verify_fix")
    for args, words in (({"source": LOG, "execution": "2"}, "only a capture's"),
                        ({"source": CAPTURE, "execution": "0", "fix": 7}, "fix must be a whole number from 0"),
                        ({"source": "/etc/passwd"}, "outside the folders")):
        got = runs.call("verify_fix", args)
        assert got.is_error and words in got.content[0].text


@pytest.mark.slow
def test_a_fix_reruns_on_spark_and_unsafe_sql_never_runs(runs, home):
    got = runs.call("verify_fix", {"source": CAPTURE, "execution": "0", "fix": 0})
    assert not got.is_error, got.content[0].text
    jsonschema.validate(got.structured_content, answer_schema("verify_fix"))
    answer = got.structured_content["answer"]
    assert answer["verified"] and answer["result"].startswith("Verified on Spark"), answer["result"]
    assert answer["score"]["reads"]
    doc = json.loads(gzip.open(CAPTURE).read())
    for q in doc["queries"]:
        q["sql"] = "ADD JAR /tmp/not-there.jar"
    doc["run"]["sql"] = "ADD JAR /tmp/not-there.jar"
    unsafe = home / "unsafe.json.gz"
    unsafe.write_bytes(gzip.compress(json.dumps(doc).encode()))
    got = runs.call("verify_fix", {"source": str(unsafe), "execution": "0", "fix": 0})
    assert not got.is_error, got.content[0].text
    answer = got.structured_content["answer"]
    assert not answer["verified"] and answer["result"].startswith("not verified"), answer["result"]
    for q in doc["queries"]:  # Spark would substitute the server's environment into the text
        q["sql"] = 'SELECT id FROM range(3) WHERE cast(id AS string) <> "${env:AQE_LENS_TEST_SECRET}"'
    doc["run"]["sql"] = doc["queries"][0]["sql"]
    unsafe.write_bytes(gzip.compress(json.dumps(doc).encode()))
    got = runs.call("verify_fix", {"source": str(unsafe), "execution": "0", "fix": 0})
    answer = got.structured_content["answer"]
    assert not answer["verified"] and "${" in answer["result"], answer["result"]
    assert TEST_SECRET not in json.dumps(got.structured_content)


@pytest.mark.slow
def test_count_hot_keys_names_the_workloads_hot_key(runs):
    """The sample skew workload gives 30% of its fact rows key 0: that is the key of the reducer
    Spark split, counted on Spark, checked against the capture, with its fixes."""
    got = runs.call("count_hot_keys", {"source": CAPTURE, "execution": "0"})
    assert not got.is_error, got.content[0].text
    jsonschema.validate(got.structured_content, answer_schema("count_hot_keys"))
    split = [e for e in got.structured_content["answer"] if e["splits"]]
    assert split and all(e["verified"] for e in split), split
    assert split[0]["keys"][0]["key"] == 0 and split[0]["keys"][0]["share"] > 0.9
    assert {f["kind"] for f in split[0]["fixes"]} >= {"salting", "split_note"}
