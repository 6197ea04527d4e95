"""The web tests' fixtures, from web_support.py: helpers live there under a name of their own, so
``from conftest import`` elsewhere in the suite still means tests/conftest.py. This folder goes at the
end of sys.path for the same reason."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))

from web_support import browser, server, sign_in, visitor, web_queue  # noqa: F401  (fixtures)
