"""AQE Lens' tests, laid out as the code is (issue 26): a package, so helpers such as
``tests.lens_browser`` import from every folder and test modules may share basenames."""
