import subprocess
import sys


def test_cli_prints_gross():
    out = subprocess.run([sys.executable, "-m", "shop", "100"], capture_output=True, text=True)
    assert out.stdout.strip() == "120"
