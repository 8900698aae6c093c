"""The app starts without errors (Streamlit's AppTest runs app.py headless)."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_app_starts_without_exceptions():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "AQE Lens"
    assert len(at.dataframe) == 1
