import sys

from driftlab_dagster.cli import main

sys.exit(main())
