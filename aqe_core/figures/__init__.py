"""Figures: plotly drawings of views (plan graphs, partition histograms). No rule math here."""
