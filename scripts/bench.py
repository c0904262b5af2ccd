"""Speed benchmark (`make bench`): writes results/bench/{bench.json,README.md,scaling.png}.

python3 scripts/bench.py                       # everything (~15 min on 2 cores)
python3 scripts/bench.py --sections iteration --threads 2 --repeats 50
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dfl_bench.bench.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
