"""``python -m aqe_core diff A B``: text, JSON (docs/diff-json.md), the regression gate's exit
code and clear messages on bad input (issue 28)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aqe_core.cli import main

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "run_pairs"
A, B = str(PAIRS / "setting_changed" / "a.json.gz"), str(PAIRS / "setting_changed" / "b.json.gz")


def _slowest_growth(doc: dict) -> float:
    return max(q["duration_change_pct"] for q in doc["matched"] if q["duration_change_pct"] is not None)


def test_json_follows_the_documented_schema(capsys):
    code = main(["diff", A, B, "--json", "--threshold", "1000000"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["regressed"] == []
    assert doc["format"] == "aqe-lens-run-diff" and doc["version"] == 1
    assert {doc["a"]["kind"], doc["b"]["kind"]} == {"capture"}
    q = next(x for x in doc["matched"] if x["a"]["description"] == "skew_join")
    assert set(q) == {"a", "b", "duration_ms", "duration_change_pct", "task_ms", "slowest_stage", "release", "joins",
                      "shuffles", "settings", "causes", "sentence", "notes", "command"}
    assert {c["decision"] for c in q["causes"]} >= {"skew split"}
    assert all(set(c["factors"]) <= {"data", "settings", "release"} for c in q["causes"])
    documented = (Path(__file__).resolve().parents[2] / "docs" / "diff-json.md").read_text()
    for key in ("key_a", "shuffle_bytes", "largest_reducer", "b_under_a_settings", "a_under_b_settings", "only_b"):
        assert f'"{key}"' in documented


def test_exit_code_gates_on_the_threshold(capsys):
    main(["diff", A, B, "--json", "--threshold", "1000000"])
    grew = _slowest_growth(json.loads(capsys.readouterr().out))
    below = max(0.0, grew - 1)
    assert main(["diff", A, B, "--threshold", str(below), "--min-ms", "0"]) == (1 if grew > below else 0)
    assert main(["diff", A, B, "--threshold", str(grew + 1), "--min-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert "3 queries matched, 0 only in a, 0 only in b" in out and "no longer split" in out


def test_the_same_run_twice_is_no_regression(capsys):
    assert main(["diff", A, A, "--threshold", "0"]) == 0
    assert "AQE decided the same way in both runs (duration +0%)" in capsys.readouterr().out


@pytest.mark.parametrize("content", [b"", b"not a log", b"\x28\xb5\x2f\xfd garbage"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content):
    bad = tmp_path / "bad.log"
    bad.write_bytes(content)
    assert main(["diff", str(bad), B]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"diff: {bad}: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["diff", A, str(tmp_path / "missing.zstd")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_bad_threshold_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["diff", A, B, "--threshold", "lots"])
    assert exc.value.code == 2 and "expected a percentage" in capsys.readouterr().err


def test_html_report_holds_the_sentences_and_the_overlays(tmp_path, capsys):
    out = tmp_path / "diff.html"
    main(["diff", A, B, "--html", str(out), "--threshold", "1000000"])
    page = out.read_text(encoding="utf-8")
    assert "two runs compared" in page and "Content-Security-Policy" in page
    assert "no longer split" in page and "id=\"overlay-0-0\"" in page
    assert main(["diff", A, B, "--html", str(tmp_path / "missing" / "x.html")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_internal_error_is_one_line_not_a_traceback(monkeypatch, capsys):
    import aqe_core.views.diff_runs as diff_runs

    def broken(*_a, **_k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(diff_runs, "diff_views", broken)
    assert main(["diff", A, B]) == 2
    err = capsys.readouterr().err
    assert err.startswith("diff: the two runs could not be compared (internal error: ZeroDivisionError")
    assert "Traceback" not in err and "boom" not in err
