"""Prints what the launcher's worker set up, one line per rank."""
import os
import sys

print("ENV", os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"],
      os.environ["LOCAL_WORLD_SIZE"], os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"],
      sys.argv[1:], __name__, flush=True)
