class TorchDispatchMode(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
