"""The Streamlit side of AQE Lens: the frame every page draws first (:mod:`ui.frame`: source and
query picker, shared links), the session-state keys (:mod:`ui.state`), and the widgets the thin
``pages/`` scripts render.

Nothing here computes: the numbers come from ``aqe_core``.
"""
