"""Reimplementations of Spark's AQE rules, one module per Spark rule.

Every public function names, in its docstring, the Spark class and method it mirrors and
the releases it covers. Numbers follow Java ``long`` arithmetic (truncating division).
"""
