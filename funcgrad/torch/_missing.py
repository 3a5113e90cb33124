"""What PyTorch 2.13 has that funcgrad.torch does not, so that reaching for it names the
missing feature (an ``AttributeError``: ``hasattr`` and ``getattr(..., default)`` behave as
for any absent name).

`MISSING` maps a feature to the names of ``torch`` and ``torch.Tensor`` that belong to it;
the names of no listed feature get the generic text. The lists were taken from
``dir(torch)`` and ``dir(torch.Tensor)`` of PyTorch 2.13 against the facade (the tests
recompute them with PyTorch installed: a name added to the facade leaves its list).
"""
from __future__ import annotations

__all__ = ["missing_error", "MISSING"]

MISSING = {
    "quantized tensors and quantization": (
        "choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine "
        "fake_quantize_per_tensor_affine fused_moving_avg_obs_fake_quant int_repr "
        "per_channel_affine per_channel_affine_float_qparams per_channel_symmetric "
        "per_tensor_affine per_tensor_symmetric q_per_channel_axis q_per_channel_scales "
        "q_per_channel_zero_points q_scale q_zero_point qint32 qint8 qscheme quint2x4 "
        "quint4x2 quint8 quantize_per_channel quantize_per_tensor "
        "quantize_per_tensor_dynamic quantized_batch_norm quantized_gru quantized_gru_cell "
        "quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d "
        "quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell ao "
        "quantization QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage "
        "QUInt8Storage fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation "
        "fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation "
        "fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 "
        "fbgemm_pack_quantized_matrix"),
    "vendor kernels and devices (cuDNN, MIOpen, MKL-DNN, MPS, XPU, MTIA, IPU, XLA, Vulkan)": (
        "cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution "
        "cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose "
        "cudnn_grid_sampler cudnn_is_acceptable miopen_batch_norm miopen_convolution "
        "miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
        "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d "
        "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d "
        "mkldnn_max_pool3d mkldnn_rnn_layer mps mtia xpu ipu to_mkldnn "
        "is_vulkan_available get_autocast_ipu_dtype get_autocast_xla_dtype "
        "is_autocast_ipu_enabled is_autocast_xla_enabled set_autocast_ipu_dtype "
        "set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled "
        "record_stream"),
    "symbolic shapes (torch.compile's dynamic shapes are funcgrad's own)": (
        "SymBool SymBoolType SymFloat SymInt SymIntType sym_constrain_range "
        "sym_constrain_range_for_size sym_float sym_fresh_size sym_int sym_ite sym_max "
        "sym_min sym_not sym_sqrt sym_sum"),
    "sub-byte and other dtypes without numpy support": (
        "int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7 bits16 "
        "bits1x8 bits2x4 bits4x2 bits8 complex32 chalf float4_e2m1fn_x2 float8_e8m0fnu"),
    "nested and masked tensors, torch.fx and torch.export graphs, torch.hub downloads": (
        "nested to_padded_tensor masked fx export hub package"),
    "__torch_function__ overrides and torch.monitor's event logging": "overrides monitor",
    "quasi-random sequences (SobolEngine) and LOBPCG eigensolvers": "quasirandom lobpcg",
    "re-pointing a tensor at other memory in place (set_, as_strided_) and tensor hashing": (
        "set_ as_strided_ hash_tensor slice_inverse"),
    "ATen's internal kernels (use nn.functional.embedding_bag and norms; synchronised "
    "batch norm's backward is derived by autograd)": (
        "embedding_bag batch_norm_backward_elemt batch_norm_backward_reduce native_norm"),
    "typed storages and the legacy tensor types (use UntypedStorage and dtypes)": (
        "BFloat16Storage BoolStorage ByteStorage CharStorage ComplexDoubleStorage "
        "ComplexFloatStorage DoubleStorage FloatStorage HalfStorage IntStorage LongStorage "
        "ShortStorage Storage StorageBase TypedStorage BFloat16Tensor CharTensor HalfTensor "
        "ShortTensor storage storage_type set_default_tensor_type"),
    "TorchScript's internal graph and type classes (torch.jit's programs are funcgrad's)": (
        "AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType CallStack Capsule "
        "ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType "
        "ConcreteModuleTypeBuilder DeepCopyMemoTable DeviceObjType DictType EnumType "
        "ErrorReport ExecutionPlan FileCheck FloatType FunctionSchema FutureType Gradient "
        "Graph GraphExecutorState IODescriptor InferredType IntType InterfaceType "
        "JITException ListType LiteScriptModule LockingLogger LoggerBase NoneType "
        "NoopLogger NumberType OperatorInfo OptionalType PyObjectType RRefType ScriptClass "
        "ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator "
        "ScriptFunction ScriptList ScriptListIterator ScriptMethod ScriptModule "
        "ScriptModuleSerializer ScriptObject ScriptObjectProperty StaticModule "
        "StreamObjType StringType TensorType TracingState TupleType Type UnionType Use Value "
        "Node AggregationType BenchmarkConfig BenchmarkExecutionStats ThroughputBenchmark "
        "parse_ir parse_schema parse_type_comment merge_type_from_type_comment "
        "unify_type_list import_ir_module import_ir_module_from_buffer classes cpp fork "
        "wait Tag DispatchKey DispatchKeySet ExcludeDispatchKeyGuard DisableTorchFunction "
        "DisableTorchFunctionSubclass PyTorchFileReader PyTorchFileWriter "
        "SerializationStorageContext DeserializationStorageContext"),
    "the sparse CSC, BSR and BSC layouts (COO and CSR are supported)": (
        "sparse_bsc_tensor sparse_bsr_tensor sparse_csc_tensor sparse_compressed_tensor "
        "ccol_indices_copy row_indices_copy to_sparse_bsc to_sparse_bsr to_sparse_csc "
        "sspaddmm saddmm hspmm dsmm hsmm smm sparse_resize_ "
        "sparse_resize_and_clear_ resize_as_sparse_"),
}

_FEATURE_OF = {name: feature for feature, names in MISSING.items() for name in names.split()}


def missing_error(owner: str, name: str) -> AttributeError:
    """The error for ``owner.name`` ("torch" or "Tensor") that the facade does not have,
    naming PyTorch's feature where it is a listed one."""
    feature = _FEATURE_OF.get(name)
    where = "module 'torch'" if owner == "torch" else "'Tensor' object"
    text = f"{where} has no attribute '{name}'"
    if feature is not None:
        text += f": funcgrad.torch does not implement {feature}"
    return AttributeError(text)
