"""Elementwise functions of funcgrad.numpy (numpy's names), most of them primitives."""
from __future__ import annotations

from funcgrad.primitives.elementwise import neg as negative, sin, cos, exp, log, tanh, sqrt, floor
from funcgrad.primitives.binary import add, sub as subtract, mul as multiply, div as true_divide

divide = true_divide

__all__ = ["negative", "sin", "cos", "exp", "log", "tanh", "sqrt", "floor", "add",
           "subtract", "multiply", "true_divide", "divide"]
