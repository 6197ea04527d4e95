"""The stance model's tests read its labelled pairs through tools/stance_data.py (the split the
model card names), so the held-out part here is the one training never read."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
