"""Library mode with the package's own programs: a package that never captures, with a training
loop its own command-line program runs, Ray workers, and kernels it exports. What only the package's
programs run is the program (eager), not an API a caller may capture; what the package re-exports,
or a script beside the package calls, stays API (a launcher root). A Ray actor's methods and a Ray
remote function run in a worker process, over Ray's RPC: no caller's capture holds them."""
from .ops import scale_rows
