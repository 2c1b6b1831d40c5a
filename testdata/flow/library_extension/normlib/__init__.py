from .ops import fused_norm, row_stats
from .jit import scale_rows, count_rows
