"""Readers: bytes from strangers (event logs in every codec and layout, capture files) into the
model. They never import the engine, views or live Spark."""
