"""``faults_job.py MODE``: rank 1 misbehaves in one way; the job must end promptly.

raise        rank 1 raises in the middle of training (the others wait in a collective)
raise_early  rank 1 raises before MPI is initialised (the others are starting it)
exit         rank 1 calls sys.exit(3) (mpiexec itself would wait for the others)
skip         rank 1 skips a collective and finishes (only the watchdog can end it)

Rank 1 prints ``FAILING AT <time.time()>`` as it misbehaves: the test measures how long the
job takes to end from then (its start, the imports, can take long on a loaded machine).
"""
import sys
import time

import funcgrad.numpy as fnp
import funcgrad.distributed as dist

mode = sys.argv[1]
if mode == "raise_early":
    import os
    if os.environ["RANK"] == "1":
        print(f"FAILING AT {time.time()}", flush=True)
        raise RuntimeError("rank 1 failed before initialising")
dist.initialize()
r = dist.process_index()
x = fnp.ones(4)
for step in range(3):
    x = dist.psum(x, "world") / dist.process_count()
if r == 1:
    print(f"FAILING AT {time.time()}", flush=True)
    if mode == "raise":
        1 / 0
    if mode == "exit":
        sys.exit(3)
    if mode == "skip":
        print("rank 1 leaves without the last collective", flush=True)
        sys.exit(0)
dist.psum(x, "world")  # the others wait here
print(f"rank {r} should not get here in mode {mode}")
