"""``torch.autograd.anomaly_mode``: anomaly detection under PyTorch's module path (it lives
in the runtime floor, `funcgrad.torch._runtime.anomaly`, since graph nodes record into it)."""
from funcgrad.torch._runtime.anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
