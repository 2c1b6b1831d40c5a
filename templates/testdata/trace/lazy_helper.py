"""Imported by stub_engine.py for the first time while a stream captures, as
torch imports sympy or triton on first use: what its import runs (a call
chain deeper than the import system's own frames) is not the engine's code
and must not be recorded as captured."""


def a(n):
    return b(n) + 1


def b(n):
    return c(n) + 1


def c(n):
    return d(n) + 1


def d(n):
    return e(n) + 1


def e(n):
    return f(n) + 1


def f(n):
    return g(n) + 1


def g(n):
    return n


TABLE = a(0)
