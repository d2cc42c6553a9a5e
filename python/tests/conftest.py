"""pytest setup: the module from build/python (PYTHONPATH, set by ctest) and the CLI binary."""
import os
import shutil

import pytest


@pytest.fixture(scope="session")
def ropesim_binary():
    """The ropesim executable the suite compares with (ROPESIM_BINARY, set by ctest)."""
    path = os.environ.get("ROPESIM_BINARY") or shutil.which("ropesim")
    if not path:
        pytest.skip("ROPESIM_BINARY is not set")
    return path
