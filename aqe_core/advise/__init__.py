"""Advice: every "what would happen if" about a query, as data. It calls the engine and builds
no view (the views shape its answers for people; advice never imports them).

Modules: :mod:`.whatif` (the one what-if path: lines and decisions under other settings, exact
on captures, estimated on plain logs; presets side by side), :mod:`.fix_findings` (what a fix is
for: each finding, its goal and the settings to try), :mod:`.recommend` (the fix search: the
smallest change whose replay reaches the goal), :mod:`.fix_estimate` (fixes on a plain event
log, estimated), :mod:`.fixes` (either, for any source), :mod:`.verify` (a prediction scored
against a re-run), :mod:`.releases` (every supported release side by side), :mod:`.lint` (a
query's settings checked against a release).
"""
