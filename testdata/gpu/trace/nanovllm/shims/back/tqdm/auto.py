class tqdm(object):
    def __init__(self, *a, **k):
        pass

    def update(self, n=1):
        pass

    def set_postfix(self, *a, **k):
        pass

    def close(self):
        pass
