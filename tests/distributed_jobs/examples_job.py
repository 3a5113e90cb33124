"""``examples_job.py OUT``: runs every example of examples/distributed in turn in this one
MPI job (each example starts and destroys its own process group), so that the test
launches one job for all; rank 0 lists the examples that finished in OUT."""
import glob
import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out, finished = sys.argv[1], []
for path in sorted(glob.glob(os.path.join(ROOT, "examples", "distributed", "*.py"))):
    sys.argv = [path]
    runpy.run_path(path, run_name="__main__")
    finished.append(os.path.basename(path))
if os.environ["RANK"] == "0":
    with open(out, "w") as f:
        f.write("\n".join(finished))
