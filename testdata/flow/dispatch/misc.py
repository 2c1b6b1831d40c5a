"""Project methods named like tensor methods (permute, unflatten), Triton kernel methods (warmup,
run), common module methods (forward, update, capture, to), and plan/pick outside the declared
hierarchies. Only eager maintenance code calls them."""


class ModelRunner:
    def warmup(self):  # context: eager
        print(self.dummy.cpu())

    def run(self, x):  # context: eager
        print(x.cpu())


class HeadLayout:
    def permute(self, *dims):  # context: eager
        print(self.order.tolist())

    def unflatten(self, dim, sizes):  # context: eager
        print(self.order.tolist())


class KVPlanner:
    def plan(self, positions):  # context: eager
        print(positions.max().item())


class Picker:
    def pick(self, logits):  # context: eager
        return logits.argmax().item()


class Hooks:
    def forward(self, x):  # context: eager
        print(x.cpu())

    def update(self, x):  # context: eager
        print(x.sum().item())

    def capture(self, x):  # context: eager
        print(x.tolist())

    def to(self, device):  # context: eager
        print(self.state.cpu())


def maintenance(x):  # context: eager
    runner = ModelRunner()
    runner.warmup()
    runner.run(x)
    layout = HeadLayout()
    layout.permute(1, 0)
    layout.unflatten(0, (2, -1))
    KVPlanner().plan(x)
    Picker().pick(x)
    hooks = Hooks()
    hooks.forward(x)
    hooks.update(x)
    hooks.capture(x)
    hooks.to("cpu")
