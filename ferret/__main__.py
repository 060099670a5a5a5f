"""`python -m ferret ...` is the `ferret` command."""
import sys

from ferret.cli import main

sys.exit(main())
