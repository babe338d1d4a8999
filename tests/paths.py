"""Where the tests find the repository and their data, wherever a test module sits."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
