"""Fleet scale (issue 14): many event logs at once. :mod:`.rows` turns one log into table rows
(executions, findings, what each preset would change); :mod:`.scan` runs that over a fleet of
logs as a Spark job and writes Parquet or CSV; the Fleet page reads the result."""
