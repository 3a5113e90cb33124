"""The ports of JAX's classic examples in examples/ run, and learn: the MLP classifier
separates its clusters, the VAE's ELBO rises, the Gaussian process fits its
hyperparameters (both ways to the same optimum) and its posterior follows sin(x)."""
import pathlib
import runpy

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _example(name):
    return runpy.run_path(str(EXAMPLES / f"{name}.py"))


def test_mlp_classifier(random):
    result = _example("mlp_classifier")["main"](verbose=False)
    assert result["train_accuracy"] > 0.95 and result["test_accuracy"] > 0.85


def test_vae(random):
    history = _example("vae")["main"](verbose=False)["elbo_history"]
    assert history[-1] > history[0] + 5, history
    assert all(np.isfinite(history))


def test_gaussian_process(random):
    result = _example("gaussian_process")["main"](verbose=False)
    assert result["rmsprop"] < result["initial"] - 1
    assert result["converged"] and result["bfgs"] <= result["rmsprop"] + 1e-6
    x = np.asarray(result["x"]).ravel()
    xtest = np.asarray(result["xtest"]).ravel()
    inside = (xtest > x.min()) & (xtest < x.max())
    mu, std = np.asarray(result["mu"]).ravel(), np.asarray(result["std"])
    assert np.all(np.abs(mu[inside] - np.sin(xtest[inside])) < 0.35)
    assert np.all(std >= 0) and std[inside].max() < std[~inside].max()


def test_examples_run_as_scripts(random, capsys):
    """``python examples/<name>.py`` (here: run as __main__ in-process)."""
    runpy.run_path(str(EXAMPLES / "gaussian_process.py"), run_name="__main__")
    assert "BFGS" in capsys.readouterr().out
