# The plugin itself loads through its pytest11 entry point; only pytester is enabled here.
pytest_plugins = ["pytester"]
