"""``torch.__future__``: switches for behaviour PyTorch plans to make the default.

How ``Module.to()`` / ``.float()`` / ``.cuda()``... convert parameters: by default the
parameter object keeps its identity and gets the converted values (``param.data = new``);
with ``set_overwrite_module_params_on_conversion(True)`` each parameter is replaced by a
new Parameter object; with ``set_swap_module_params_on_conversion(True)`` the new
Parameter is swapped into the old object (`torch.utils.swap_tensors`), so references held
elsewhere (an optimizer's) see the converted parameter, its class and its gradient.
"""
_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False

__all__ = ["set_overwrite_module_params_on_conversion",
           "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Replace parameters by new objects when a module converts them."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Swap converted parameters into the old objects (`torch.utils.swap_tensors`)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    return _swap_module_params_on_conversion
