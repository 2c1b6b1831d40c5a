"""Classes: a method call runs the method the receiver's MRO finds (C3 linearization, multiple
inheritance), super() continues along the MRO of the instance's class (not the static base of
the class that calls it), and a class attribute holding a class is instantiated through self.

DecoderLayer(Residual, FusedMix) has the MRO DecoderLayer, Residual, FusedMix, Layer. Its
forward is Residual.forward, whose super().forward is Layer.forward; Layer.forward's self.mix is
Residual.mix, whose super().mix is FusedMix.mix. Layer.mix is shadowed and never runs (a
depth-first MRO, or super() taken as Residual's base, would reach it).
"""
import torch


class RMSNorm:
    def __init__(self, dim):
        self.weight = torch.ones(dim, device="cuda")

    def normalize(self, x):  # context: captured
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan before norm")
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class LayerNorm:
    def __init__(self, dim):
        self.dim = dim

    def normalize(self, x):  # context: eager
        # EncoderLayer's norm: only the eager encoder reaches it.
        if x.isnan().any().item():
            raise FloatingPointError("nan before norm")
        return torch.nn.functional.layer_norm(x, (self.dim,))


class Layer:
    def forward(self, x):  # context: captured
        return self.mix(self.norm.normalize(x))

    def mix(self, x):  # context: eager
        if x.abs().max().item() > 1e4:
            raise FloatingPointError("overflow")
        return x


class Residual(Layer):
    def forward(self, x):  # context: captured
        return x + super().forward(x)

    def mix(self, x):  # context: captured
        return super().mix(x) * 0.5


class FusedMix(Layer):
    def mix(self, x):  # context: captured
        if x.abs().max().item() > 1e4:  # want: CG101
            raise FloatingPointError("overflow")
        return torch.nn.functional.silu(x)


class DecoderLayer(Residual, FusedMix):
    norm_cls = RMSNorm

    def __init__(self, dim):
        self.norm = self.norm_cls(dim)


class EncoderLayer:
    norm_cls = LayerNorm

    def __init__(self, dim):
        self.norm = self.norm_cls(dim)

    def encode(self, x):  # context: eager
        return self.norm.normalize(x)
