"""Entries that no caller's capture holds, beside the steps they drive, which stay roots.

A coroutine function (`async def`): calling it runs none of its body (it returns a coroutine), and
the body runs when an event loop awaits it, interleaved with the loop's other tasks, as a server's
scheduling loop does. A function handed to a process or thread launcher (`Process(target=...)`,
`Thread(target=...)`, `torch.multiprocessing.spawn`) runs as the entry of another process or
thread, which its own code drives. A function named as a test (pytest's `test` prefix) that no
project code calls is a module's self-test, run by hand. Each calls a step a caller may capture,
and that step is a root of its own."""
import asyncio
import multiprocessing as mp
import threading

import torch
import torch.multiprocessing as tmp

from .ops import _launch


def decode(x):  # context: launcher
    return _launch(x, x.abs().amax().item())  # want: CG101~


class Router:
    async def loop(self, x):  # context: eager
        while True:
            x = decode(x)
            print(x.sum().item())
            await asyncio.sleep(0)

    async def step_once(self, x):  # context: eager
        return _launch(x, x.norm().item())

    def step(self, x):  # context: launcher
        return _launch(x, x.min().item())  # want: CG101~


def worker_main(x, q):  # context: eager
    while True:
        q.put(_launch(x, x.max().item()))


def thread_main(x):  # context: eager
    print(decode(x).sum().item())


def rank_main(rank, x):  # context: eager
    print(_launch(x, x.std().item()))


def serve(x):  # context: eager
    q = mp.Queue()
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=worker_main, args=(x, q))
    p.start()
    t = threading.Thread(target=thread_main, args=(x,))
    t.start()
    tmp.spawn(rank_main, args=(x,), nprocs=2)


def test_decode():  # context: eager
    x = torch.randn(16, device="cuda")
    assert decode(x).sum().item() != 0


def testing_scale(x):  # context: launcher
    # a public function whose name starts with "test" that the package calls: a helper, not a test
    return _launch(x, x.mean().item())  # want: CG101~


def calibrate(x):  # context: launcher
    return testing_scale(x)
