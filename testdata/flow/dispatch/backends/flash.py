from .base import AttnBackend


class FlashBackend(AttnBackend):
    def plan(self, positions):  # context: captured resolution: hierarchy
        if positions.max().item() >= self.max_len:  # want: CG101~
            raise ValueError("position out of range")

    def attend(self, q):  # context: captured resolution: hierarchy
        if q.isnan().any().item():  # want: CG101~
            raise FloatingPointError("nan q")
        return q.softmax(-1)


BACKEND_CLS = FlashBackend
