"""Views: plain data for people (lines, sentences, findings, what-if, comparisons) built from
the model and the engine's results. No plotting, no Spark, no Streamlit."""
