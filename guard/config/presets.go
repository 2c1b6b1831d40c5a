package config

import (
	"sort"
	"strings"
)

// Preset is what capguard knows of one framework: the documented extension
// points it calls relative to its CUDA graphs, its kernel-op namespaces, and
// the package names that turn the preset on. docs/presets.md says what each
// preset names and why.
//
// The hard rule: a preset names only its framework's documented public API
// (base classes to subclass, hook methods, op namespaces; a docs page, a
// developer guide, or a public base class whose docstring says "implement
// this"), never a function, class or file of one particular project. Every
// entry below cites its source and the version read.
type Preset struct {
	// Captured, ReplayPrep and PostCapture are "module:Qual.name" globs (`*`
	// only) of methods that run under capture when the framework captures,
	// that the framework runs between replays to refresh what captured code
	// reads, and that may run after graphs exist (weight reloads). They match
	// the checked project's functions by name: a subclass matches when its
	// name follows the framework's naming (FooAttentionImpl for
	// AttentionImpl).
	Captured    []string
	ReplayPrep  []string
	PostCapture []string
	// OnReload are the PostCapture patterns of hooks the framework runs
	// when weights are loaded, before any capture, and again only when
	// weights are reloaded into a live engine (vLLM's
	// process_weights_after_loading): whether they run after the graphs
	// exist depends on a reload the analysis does not see, so a root they
	// make names that assumption (its findings are warnings), unless a
	// chain from a reload the project runs reaches them.
	OnReload []string
	// PostCaptureRPC are method names of the framework's remote-call API
	// whose first argument, a string, names a method of the checked project
	// that the framework runs on its workers after the graphs exist
	// (`llm.collective_rpc("update_weights")`).
	PostCaptureRPC []string
	// KernelOps are dotted-name globs of extension ops that launch kernels.
	KernelOps []string
	// Predicates are dotted-name globs of conditions that hold during
	// capture; a "!" prefix marks one that is false during capture.
	Predicates []string
	// Detect are top-level package names or import prefixes ("vllm",
	// "tensorrt_llm"): the checked project's own top-level package, or an
	// import of one, turns the preset on (DetectPresets).
	Detect []string
	// Device is the device type the framework captures graphs on, when
	// it is not cuda.
	Device string
	// Modules are the framework's public base classes that are torch
	// modules (dotted names, each spelling its documentation imports
	// from; a `*` matches any run of characters, dots too, for the
	// classes a framework's naming convention makes modules): a project
	// class derived from one is a torch module, so calling an instance
	// runs its forward.
	Modules []string
}

// Presets names the framework presets.
var Presets = map[string]Preset{
	"sglang": {
		Captured: []string{
			// AttentionBackend.forward_decode: "used for normal decode, and
			// draft decode"; the CUDA graph runner captures the decode forward
			// ("the decode backend is always captured").
			// https://docs.sglang.io/advanced_features/attention_backend.html
			// (sgl-project/sglang docs/advanced_features/attention_backend.md
			// @0c078e6, "Steps to add a new attention backend");
			// python/sglang/srt/layers/attention/base_attn_backend.py @009db01.
			"*:*Backend.forward_decode",
		},
		ReplayPrep: []string{
			// "It will be called before replaying a cuda graph" (same page);
			// CudaGraphRunner.replay_prepare calls it before graph.replay()
			// (python/sglang/srt/model_executor/cuda_graph_runner.py @0021673).
			"*:*.init_forward_metadata_replay_cuda_graph",
		},
		PostCapture: []string{
			// Engine API and HTTP endpoints for RL weight refit; the update
			// runs on a live server whose graphs are kept
			// (`recapture_cuda_graph` defaults to false).
			// https://docs.sglang.io/advanced_features/sglang_for_rl.html
			// (docs/advanced_features/sglang_for_rl.md @6614f98).
			"*:*.update_weights_from_disk",
			"*:*.update_weights_from_tensor",
			"*:*.update_weights_from_distributed",
		},
		KernelOps: []string{
			// SGLang's kernel library; "the Python import path remains
			// sgl_kernel". https://pypi.org/project/sglang-kernel/
			"sgl_kernel.*",
		},
		Detect: []string{"sglang"},
	},
	"vllm": {
		Captured: []string{
			// AttentionImpl.forward (abstract; backends subclass it as
			// <Name>Impl: FlashAttentionImpl, FlashInferImpl, ...). In the
			// default FULL_AND_PIECEWISE mode uniform-decode batches run in a
			// full CUDA graph that includes attention.
			// vllm/v1/attention/backend.py @0014ca6;
			// https://docs.vllm.ai/en/latest/design/cuda_graphs.html
			// (docs/design/cuda_graphs.md @0045689).
			"*:*Impl.forward",
			// MLAAttentionImpl.forward_mqa: "MQA-style decode forward pass"
			// (vllm/v1/attention/backend.py @0014ca6), captured as above.
			"*:*Impl.forward_mqa",
		},
		ReplayPrep: []string{
			// AttentionMetadataBuilder.build: "Central method that builds
			// attention metadata", run for every step before the model
			// forward, so between replays; a builder declaring cudagraph
			// support (AttentionCGSupport) must fill the buffers the graph
			// captured. vllm/v1/attention/backend.py @0014ca6;
			// docs/design/cuda_graphs.md @0045689 ("CUDA Graphs Compatibility
			// of Attention Backends").
			"*:*MetadataBuilder.build",
		},
		PostCapture: []string{
			// Post-load weight processing hook (QuantizeMethodBase,
			// AttentionImplBase), re-run when weights are reloaded into a live
			// engine; reload_weights() "does NOT clear or re-capture CUDA
			// graphs". vllm/model_executor/layers/quantization/base_config.py,
			// vllm/v1/attention/backend.py @0014ca6;
			// https://github.com/vllm-project/vllm/issues/48941,
			// https://github.com/vllm-project/vllm/issues/48312.
			"*:*.process_weights_after_loading",
			// The documented reload entry (llm.collective_rpc("reload_weights"),
			// examples/offline_inference/skip_loading_weights_in_engine_init.py
			// @b82e6cb); issue #48941 as above.
			"*:*.reload_weights",
		},
		OnReload: []string{
			// It runs when the model is loaded, before the graphs are
			// captured, and again on reload_weights: after capture only on a
			// reload (vllm/model_executor/model_loader/utils.py
			// process_weights_after_loading, called by the loaders' load_model).
			"*:*.process_weights_after_loading",
		},
		PostCaptureRPC: []string{
			// LLM.collective_rpc(method, ...): "Execute an RPC call on all
			// workers"; a string method is looked up on the worker (and its
			// worker extension class), which runs the engine whose graphs
			// were captured at start-up. The documented route for RL weight
			// updates. https://docs.vllm.ai/en/latest/api/vllm/entrypoints/llm.html
			// (vllm/entrypoints/llm.py, LLM.collective_rpc);
			// examples/offline_inference/rlhf.py.
			"collective_rpc",
		},
		KernelOps: []string{
			// vLLM's Python op namespace over its CUDA extension
			// (vllm/_custom_ops.py @7bcae67; each wraps torch.ops._C*).
			"vllm._custom_ops.*",
		},
		Detect: []string{"vllm"},
	},
	"vllm-ascend": {
		// A vLLM platform plugin: its attention impls and metadata builders
		// subclass vLLM's, so the vllm preset covers them (a vllm-ascend
		// project imports vllm, which turns that preset on too).
		ReplayPrep: []string{
			// "Before replay, update_full_graph_params() calls the backend
			// specific update_graph_params() implementation" (full ACL graph
			// mode). https://docs.vllm.ai/projects/ascend/en/latest/developer_guide/Design_Documents/ACL_Graph.html
			// (vllm-project/vllm-ascend
			// docs/source/developer_guide/Design_Documents/ACL_Graph.md
			// @182b75e, v0.19.1rc1-1637).
			"*:*Impl.update_graph_params",
		},
		KernelOps: []string{
			// Ascend Extension for PyTorch custom operators
			// (torch_npu.npu_fused_infer_attention_score, ...), the NPU
			// kernels vllm-ascend's backends launch.
			// https://www.hiascend.com/document/detail/zh/Pytorch/700/apiref/apilist/ptaoplist_001232.html
			"torch_npu.npu_*",
		},
		Detect: []string{"vllm_ascend"},
		// torch_npu's device type: NPU graphs run on "npu" devices.
		Device: "npu",
	},
	"lmdeploy": {
		PostCapture: []string{
			// POST /update_weights ("update model weights online for scenes
			// such as RL training") is served by update_params down to the
			// model agent, which loads into the live model without dropping
			// its CUDA graphs. docs/en/advance/update_weights.md;
			// lmdeploy/serve/openai/endpoints/management.py,
			// lmdeploy/pytorch/engine/model_agent/agent.py (InternLM/lmdeploy
			// 0.16.0).
			"*:*.update_params",
		},
		Detect: []string{"lmdeploy"},
	},
	"lightllm": {
		Captured: []string{
			// BaseLayerInfer.token_forward, "single step decode stage
			// inference", implemented by the PreLayerInfer /
			// TransformerLayerInfer / PostLayerInfer subclasses (and their
			// *LayerInferTpl templates); the decode step that calls them is
			// what LightLLM captures. docs/EN/source/models/add_new_model.md;
			// lightllm/common/basemodel/basemodel.py (_decode),
			// lightllm/common/basemodel/cuda_graph.py (ModelTC/lightllm 1.0.1).
			"*:*LayerInfer*.token_forward",
		},
		Detect: []string{"lightllm"},
	},
	"tgi": {
		// TGI documents no Python extension point around its graphs (only
		// the launcher's --cuda-graphs); its capture and replay are Python
		// in its own server, which the call graph follows. See
		// docs/presets.md.
		Detect: []string{"text_generation_server"},
	},
	"rtp-llm": {
		Captured: []string{
			// FMHAImplBase.forward / MlaImplBase.forward, the interface every
			// attention implementation (<Name>Impl) provides; the C++
			// CudaGraphRunner calls the Python model forward under capture.
			// rtp_llm/models_py/modules/factory/attention/fmha_impl_base.py;
			// rtp_llm/cpp/cuda_graph/cuda_graph_runner.cc
			// (captureOneGraphInstance) (alibaba/rtp-llm @4b8d39c,
			// v0.2.0-1161).
			"*:*Impl.forward",
		},
		ReplayPrep: []string{
			// FMHAImplBase.support_cuda_graph: to support CUDA graphs "the
			// subclass must implement prepare_cuda_graph(self, attn_inputs)";
			// CudaGraphRunner::prepareAttentionInputs calls it before each
			// replay (same files).
			"*:*.prepare_cuda_graph",
		},
		KernelOps: []string{
			// rtp-llm's compute-op binding module (rmsnorm, topk_v3, ...).
			// Source only, no docs page: rtp_llm/ops/compute_ops, used as
			// `from rtp_llm.ops.compute_ops import rtp_llm_ops` (@4b8d39c).
			"rtp_llm.ops.compute_ops.rtp_llm_ops.*",
		},
		Detect: []string{"rtp_llm"},
	},
	"trtllm": {
		Captured: []string{
			// "Single step forward: ... call AttentionBackend.forward"; the
			// backends are <Name>Attention (TrtllmAttention,
			// FlashInferAttention, VanillaAttention), and the generation step
			// runs under torch.cuda.graph in CUDAGraphRunner.capture.
			// https://nvidia.github.io/TensorRT-LLM/torch/attention.html
			// (NVIDIA/TensorRT-LLM docs/source/torch/attention.md @d3608d6);
			// tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py @7b437aa.
			"*:*Attention.forward",
		},
		ReplayPrep: []string{
			// "Before each forward step ... call AttentionMetadata.prepare";
			// "Do not re-allocate any tensors stored inside AttentionMetadata
			// after the initial warmup run when using CUDA graphs"; replay
			// reuses the captured metadata object (same sources).
			"*:*AttentionMetadata.prepare",
		},
		Detect: []string{"tensorrt_llm"},
	},
	"flashinfer": {
		// The wrapper patterns take effect where the wrapper classes are
		// part of the checked code (flashinfer itself, a vendored copy);
		// calls into an installed flashinfer are kernel ops.
		Captured: []string{
			// The wrappers' run(): with use_cuda_graph=True "the auxiliary
			// data structures will be stored as the provided buffers" and
			// run() is what a caller captures.
			// https://docs.flashinfer.ai/api/decode.html
			// (flashinfer-ai/flashinfer docs/api/attention.rst,
			// flashinfer/decode.py @fb28d72, nightly-v0.6.18).
			"*flashinfer.*:*Wrapper.run",
		},
		ReplayPrep: []string{
			// "The plan method could not be captured by CUDAGraph"
			// (CUDAGraphBatchDecodeWithPagedKVCacheWrapper): plan() runs
			// before replays and writes the buffers run() reads (same sources).
			"*flashinfer.*:*Wrapper.plan",
		},
		KernelOps: []string{
			// The library's documented kernel API (flashinfer.decode,
			// flashinfer.prefill, flashinfer.norm, ...): docs/api/*.rst.
			"flashinfer.*",
		},
		Detect: []string{"flashinfer"},
	},
	"transformers": {
		// PreTrainedModel "takes care of storing the configuration of the
		// models and handles methods for loading, downloading and saving
		// models"; every model is "a PyTorch torch.nn.Module subclass".
		// https://huggingface.co/docs/transformers/main_classes/model
		// (huggingface/transformers docs/source/en/main_classes/model.md,
		// src/transformers/modeling_utils.py: class PreTrainedModel(nn.Module, ...)).
		// Each model class a model's page documents (`GPT2Model`,
		// `LlamaForCausalLM`, `GPT2LMHeadModel`) says "This model inherits
		// from PreTrainedModel ... This model is also a PyTorch
		// torch.nn.Module subclass"; the layers of a model's modeling
		// module (`transformers.models.llama.modeling_llama.LlamaAttention`)
		// are torch modules too. A project class that subclasses one and
		// defines forward (`class FastGPT2(GPT2Model)`) runs it when called.
		Modules: []string{"transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
			"transformers.*Model", "transformers.*For*", "transformers.models.*.modeling_*.*"},
		Detect: []string{"transformers"},
	},
	"diffusers": {
		// ModelMixin: "Base class for all models ... ModelMixin takes care
		// of storing the model configuration"; a torch.nn.Module subclass.
		// https://huggingface.co/docs/diffusers/api/models/overview
		// (huggingface/diffusers src/diffusers/models/modeling_utils.py:
		// class ModelMixin(torch.nn.Module, PushToHubMixin)).
		// Its model classes (`UNet2DConditionModel`, `ControlNetModel`,
		// `AutoencoderKL`: the "Models" section of the API docs) are
		// ModelMixin subclasses, under diffusers.models.
		Modules: []string{"diffusers.ModelMixin", "diffusers.models.ModelMixin", "diffusers.models.modeling_utils.ModelMixin",
			"diffusers.*Model", "diffusers.Autoencoder*", "diffusers.models.*"},
		Detect: []string{"diffusers"},
	},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DetectPresets returns, sorted, the presets whose Detect entries match a
// top-level package of the checked project or a module it imports. Matching
// is by dotted-name prefix: "vllm" matches "vllm" and "vllm.config", not
// "vllm_ascend"; an entry "a.b" matches "a.b" and "a.b.c", not "a".
func DetectPresets(topPackages []string, imports []string) []string {
	var out []string
	for _, name := range PresetNames() {
		if presetDetected(Presets[name].Detect, topPackages, imports) {
			out = append(out, name)
		}
	}
	return out
}

func presetDetected(detect []string, lists ...[]string) bool {
	for _, d := range detect {
		for _, list := range lists {
			for _, n := range list {
				if n == d || strings.HasPrefix(n, d+".") {
					return true
				}
			}
		}
	}
	return false
}
