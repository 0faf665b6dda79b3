from __future__ import annotations

import sys

from paimon_core.cli import main

sys.exit(main())
