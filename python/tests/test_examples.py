"""The examples run as a researcher would start them, on the CPU engine with a small N, with the old
keyword forms' DeprecationWarning as an error: they use the current API only."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.mark.parametrize("script, out", [
    ("order_parameter.py", "order.png"),
    ("galaxy_collision.py", "frames"),
    ("parameter_sweep.py", "sweep.csv"),
])
def test_example_runs(script, out, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / out
    # Warnings are errors: the examples use only the current API (the old forms warn).
    subprocess.run([sys.executable, "-W", "error::DeprecationWarning", os.path.join(EXAMPLES, script), "--n", "600",
                    "--steps", "20", "--engine", "cpu", "--out", str(target)], check=True, cwd=tmp_path, timeout=300)
    assert target.exists()
    if target.is_dir():
        assert len(os.listdir(target)) > 0
