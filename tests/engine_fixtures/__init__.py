"""One pytest plugin module per engine of the shared edge-case suite.

Each module builds the shop tables (``tests.checks.declared.shop``) on its engine and
gives the ``shop_<engine>_opener`` session fixture its ``SHOP_ENGINES`` entry names;
``tests/conftest.py`` loads each through ``pytest_plugins`` (docs/engines.md).
"""
