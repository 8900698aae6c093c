"""The Streamlit side of AQE Lens: the frame app.py draws once (source and query picker, shared
links), the session-state keys, and the widgets the thin ``pages/`` scripts render.

Nothing here computes: the numbers come from ``aqe_core``.
"""
