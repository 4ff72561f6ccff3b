"""LangChain and LangGraph adapters.

The post-processor, tool wrapper, truncation node, budget guard, middleware and fetch tool.
"""
