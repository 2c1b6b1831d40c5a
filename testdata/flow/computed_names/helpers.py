"""A helper that stores under the name its caller gives (`setattr(self, name, module)` in a base
class's `add_module`, `setattr(obj, name, value)` in a free function) stores, at each call, what
that call passed, into the object that call passed, under that call's name when it is a literal:
reading `self.decode` gets the module stored as "decode" on that object, not every module that
any call of the helper stored anywhere. A call that passes a computed name still stores under one
(a guess for every name the class does not define), on its own object only."""
import torch


class Container:
    def add_module(self, name, module):  # context: eager
        setattr(self, name, module)


def attach(obj, name, value):  # context: eager
    setattr(obj, name, value)


class Sampler:
    def __call__(self, x):  # context: eager
        return x + x.sum().item()


class Logger:
    def __call__(self, x):  # context: eager
        return float(x.mean())


class Decode:
    def __call__(self, x):  # context: captured
        return x * 2


class Gate:
    def __call__(self, x):  # context: captured resolution: name
        return x * x.max().item()  # want: CG101~


class Scale:
    def __call__(self, x):  # context: captured resolution: name
        return x + x.min().item()  # want: CG101~


class Table:
    """`t[name] = v` binds its parameters without a call's arguments, so its store is made on
    them too, as one store under a computed name."""

    def __setitem__(self, name, value):  # context: eager
        setattr(self, name, value)


class Settings:
    """Its getter reads, at each call with a literal name, that attribute of that call's object:
    `settings.get("sampler")` is the sampler set in `__init__`, not only what computed-name
    stores put there (nothing, here); so is `settings["picker"]` through `__getitem__`."""

    def __init__(self):  # context: eager
        self.sampler = Draw()
        self.logger = Logger()
        self.picker = Pick()

    def get(self, key, default=None):  # context: captured
        return getattr(self, key, default)

    def __getitem__(self, key):  # context: captured
        return getattr(self, key)


class Draw:
    def __call__(self, x):  # context: captured
        return x.argmax().item()  # want: CG101


class Pick:
    def __call__(self, x):  # context: captured
        return x[: int(x.sum())]  # want: CG101 CG102


def sample(x):  # context: eager
    settings = Settings()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = settings.get("sampler")(x) + settings["picker"](x)
    return out, settings.get("logger")


class Step(Container):
    def __init__(self):  # context: eager
        self.add_module("decode", Decode())
        attach(self, "log", Logger())
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.decode(x)


class Post(Container):
    def __init__(self, names):  # context: eager
        self.add_module("sample", Sampler())
        attach(self, "log", Logger())
        for n in names:
            self.add_module(n, Gate())
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.gated(x)


def scaled(x):  # context: eager
    t = Table()
    t.__setitem__("offset", 0)  # a call: its literal name is stored as such
    t["scale"] = Scale()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = t.scale(x)
    return out


def build(names, x):  # context: eager
    scaled(x)
    sample(x)
    return Step().capture(x), Post(names).capture(x), Post(names).log(x), Post(names).sample(x)
