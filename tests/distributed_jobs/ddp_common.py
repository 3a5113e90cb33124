"""The model, data and training loop the DDP jobs share, for funcgrad.torch and for
PyTorch itself (``torch`` is whichever module the job passes in)."""
import numpy as np

STEPS = 4
GLOBAL_BATCH = 12


def data():
    rng = np.random.RandomState(0)
    return (rng.randn(GLOBAL_BATCH, 4).astype(np.float32),
            rng.randn(GLOBAL_BATCH, 3).astype(np.float32))


def initial_state():
    rng = np.random.RandomState(1)
    return {"0.weight": rng.randn(8, 4) * 0.5, "0.bias": rng.randn(8) * 0.1,
            "2.weight": rng.randn(3, 8) * 0.5, "2.bias": rng.randn(3) * 0.1}


def model(torch, seed=0):
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    net.load_state_dict({k: torch.tensor(v.astype(np.float32))
                         for k, v in initial_state().items()})
    return net


def train(torch, net, X, Y, indices):
    """SGD with momentum on the rows ``indices`` of the data; the parameters after."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.tensor(X[indices]), torch.tensor(Y[indices])
    for _ in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        opt.step()
    return {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
