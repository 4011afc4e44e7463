"""Opt-in integrations with libraries that pick devices from a fixed list.

- :mod:`torch_ocl.integrations.accelerate`: Hugging Face accelerate and ``transformers.Trainer``.
"""
