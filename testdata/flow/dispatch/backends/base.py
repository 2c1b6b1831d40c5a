class AttnBackend:
    def __init__(self, max_len):
        self.max_len = max_len

    def plan(self, positions):  # context: captured resolution: annotated
        raise NotImplementedError

    def attend(self, q):  # context: captured resolution: annotated
        raise NotImplementedError
