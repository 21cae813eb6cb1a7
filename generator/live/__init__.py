"""After deploy: the live host against the render (``gen verify``, ``gen status``, ``gen preflight``).

One module per resource (pytest-testinfra style): ``checks_files``, ``checks_install``,
``checks_service``, ``checks_weights``, ``checks_gpus``, ``checks_paths``; ``plan``
derives what to expect from a render, ``target`` reaches the host over ssh, ``onhost``
is the standalone script run there with the host's SGLang interpreter.
"""
