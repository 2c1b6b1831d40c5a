package torchapi

// CaptureAPIs are the graph context managers and capture calls.
var CaptureAPIs = map[string]bool{
	"torch.cuda.graph": true, "torch.cuda.graphs.graph": true, "torch.npu.graph": true, "torch.npu.graphs.graph": true,
	"torch_npu.npu.graph": true, "torch_npu.npu.graphs.graph": true, "torch.xpu.graph": true,
	// Intel Gaudi's PyTorch bridge (`import habana_frameworks.torch as
	// htcore; with htcore.hpu.graph(g):`).
	"habana_frameworks.torch.hpu.graph": true,
}

// GraphedAPIs take callables and return graphed ones.
var GraphedAPIs = map[string]bool{
	"torch.cuda.make_graphed_callables": true, "torch.cuda.graphs.make_graphed_callables": true,
	"torch.npu.make_graphed_callables": true, "torch_npu.npu.make_graphed_callables": true,
}

// GraphClasses are the graph objects a project that captures makes.
var GraphClasses = map[string]bool{
	"torch.cuda.CUDAGraph": true, "torch.cuda.graphs.CUDAGraph": true, "torch.npu.NPUGraph": true,
	"torch_npu.npu.NPUGraph": true, "torch.xpu.XPUGraph": true, "habana_frameworks.torch.hpu.HPUGraph": true,
}
