"""The memory proxy: Ollama's and OpenAI's model APIs on the endpoint, forwarded to a model server with memory.

:mod:`~engine.api.proxy.forward` owns the routes and the forwarding, :mod:`~engine.api.proxy.dialects` what is read
and changed in each protocol's requests and answers, :mod:`~engine.api.proxy.memory` the recall, the recording and
the reporting of failures, :mod:`~engine.api.proxy.translate` Ollama clients in front of an OpenAI-compatible server.
"""
