"""A training loop: host syncs and data-dependent shapes are fine here, nothing is captured."""
import torch


def train(model, loader, opt):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item(), torch.nonzero(y).shape)
        torch.cuda.synchronize()
