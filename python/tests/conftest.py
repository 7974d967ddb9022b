"""Shared fixtures: the murmur executable (MURMUR_EXE, set by scripts/test.sh), frames drawn where a
renderer is, and the GPU marker."""
import os

import pytest

import murmuration as mm


@pytest.fixture
def murmur_exe():
    exe = os.environ.get("MURMUR_EXE")
    if not exe:
        pytest.skip("MURMUR_EXE is not set (scripts/test.sh sets it to the built murmur)")
    if not os.access(exe, os.X_OK):
        pytest.fail(f"MURMUR_EXE={exe} is not an executable")
    return exe


@pytest.fixture
def offscreen():
    """offscreen(make): make()'s frame; the test is skipped where no offscreen renderer can be made."""
    def draw(make):
        try:
            return make()
        except RuntimeError as e:
            if "no offscreen" in str(e) or "no renderer" in str(e):
                pytest.skip(str(e))
            raise
    return draw


def pytest_collection_modifyitems(config, items):
    if mm.cuda_available():
        return
    why = mm._native.cuda_available()[1] or "no CUDA device"
    skip = pytest.mark.skip(reason=f"CUDA engine unavailable: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
